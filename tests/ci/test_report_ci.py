"""The report's Validation section carries the exact-head CI, and its gates decide the exit code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo

pytestmark = pytest.mark.slow  # full reports against a fake GitHub


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(range(1, 3))
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_report_exits_0_only_with_green_ci_at_the_head(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo.downstream)
    args = [
        "report",
        "--baseline",
        demo.baseline,
        "--sync",
        "ci-test",
        "--skip-gate",
        "audit",
        "--skip-gate",
        "tests",
    ]
    args += ["--ci-repo", "vime-org/vime", "--require", "buildkite/vime"]
    github.statuses[demo.head] = [
        {
            "context": "buildkite/vime",
            "state": "pending",
            "target_url": "https://buildkite.com/v/vime/builds/1454",
        }
    ]
    code, md, _ = run(args, capsys)
    assert code == 1
    assert (
        f"Exact-head CI of vime-org/vime at {demo.head[:8]}: **pending** "
        "(still running `buildkite/vime #1454`)" in md
    )
    assert (
        "- ⏳ **ci**: pending — pending at" in md
        and "- – **audit**: off — switched off with --skip-gate" in md
    )
    github.statuses[demo.head][0]["state"] = "success"
    code, md, _ = run([*args, "--format", "json"], capsys)
    doc = json.loads(md)
    assert code == 0 and doc["gates_ok"] and doc["ci"]["verdict"] == "green" and doc["ci"]["sha"] == demo.head


def test_no_token_leaves_ci_not_checked(demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.chdir(demo.downstream)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    args = [
        "report",
        "--baseline",
        demo.baseline,
        "--sync",
        "t",
        "--skip-gate",
        "audit",
        "--ci-repo",
        "vime-org/vime",
    ]
    code, md, _ = run(args, capsys)
    assert (
        code == 1
        and "No GitHub token in the environment (GITHUB\\_TOKEN or GH\\_TOKEN): CI not checked." in md
    )
    assert "- ? **ci**: not checked" in md
    code, _, _ = run([*args, "--skip-gate", "ci", "--skip-gate", "tests"], capsys)
    assert code == 0


def test_gates_file_switches_a_gate_off_with_its_reason(
    demo: Demo, capsys, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(demo.downstream)
    gates = demo.downstream / "sop/gates.toml"
    before = gates.read_bytes() if gates.exists() else None
    gates.write_text(
        '[off]\nci = "CI runs on an internal Jenkins"\naudit = "audited by hand"\ntests = "none yet"\n'
    )
    try:
        code, md, _ = run(["report", "--baseline", demo.baseline, "--sync", "t"], capsys)
        assert code == 0
        assert "- – **ci**: off — CI runs on an internal Jenkins (sop/gates.toml)" in md
        gates.write_text('[off]\nnot-a-gate = "x"\n')
        code, _, err = run(["report", "--baseline", demo.baseline, "--sync", "t"], capsys)
        assert code == 2 and "is no gate" in err
        assert run(["report", "--skip-gate", "nope"], capsys)[0] == 2
    finally:
        gates.unlink()
        if before is not None:
            gates.write_bytes(before)


def test_report_junit_has_one_case_per_gate(demo: Demo, capsys, monkeypatch, tmp_path: Path) -> None:
    from junitparser import JUnitXml

    monkeypatch.chdir(demo.downstream)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "gates.xml"
    args = ["report", "--baseline", demo.baseline, "--sync", "t", "--skip-gate", "audit"]
    code, out, _ = run([*args, "--junit", str(junit), "--annotations", "github"], capsys)
    assert code == 1
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    cases = {c.name: c for c in suite}
    assert list(cases) == ["classified", "carried", "patches", "audit", "tests", "ci"]
    assert suite.failures == 2 and suite.skipped == 1  # ci and tests not checked; audit switched off
    assert "not checked" in cases["ci"].result[0].message
    assert "::error title=sync gate ci%3A not checked::" in out
    assert summary.read_text().startswith("\n## Summary")  # the whole report, appended


def test_untrusted_checkout_honours_neither_off_nor_a_foreign_ci_repo(
    demo: Demo, capsys, monkeypatch, github: FakeGitHub
) -> None:
    monkeypatch.chdir(demo.downstream)
    monkeypatch.setenv("VIMESYNC_UNTRUSTED", "1")
    monkeypatch.setenv("GITHUB_REPOSITORY", "vime-org/vime")
    down = str(demo.downstream)
    flags = [
        "--baseline",
        demo.baseline,
        "--sync",
        "t",
        "--upstream",
        str(demo.upstream),
        "--downstream",
        down,
    ]
    flags += ["--source", str(demo.engine)]
    gates = demo.downstream / "sop/gates.toml"
    before = gates.read_bytes()
    gates.write_text('[off]\nci = "a PR would like that"\naudit = "and that"\n')
    github.statuses[demo.head] = [{"context": "buildkite/vime", "state": "success"}]
    try:
        code, md, err = run(["report", *flags], capsys)
        assert code == 1  # the PR's [off] is not honoured: audit (unreviewed) and ci evaluated
        assert "sop/gates.toml switches ci off, not honoured in an untrusted checkout" in " ".join(
            err.split()
        )
        assert f"Exact-head CI of vime-org/vime at {demo.head[:8]}: **green**" in md  # the job's repository
        code, _, _ = run(["report", *flags, "--skip-gate", "audit", "--skip-gate", "tests"], capsys)
        assert code == 0  # the job's own switch is
        # A [ci] repo in the checkout naming another repository would forge the evidence: refused.
        cfg = demo.downstream / "vimesync.toml"
        original = cfg.read_text()
        cfg.write_text(original + '\n[ci]\nrepo = "attacker/green"\n')
        try:
            code, _, err = run(["ci", "--sha", demo.head], capsys)
            assert code == 2 and "not this job's repository (vime-org/vime)" in " ".join(err.split())
            code, out, _ = run(["ci", "--sha", demo.head, "--repo", "vime-org/vime"], capsys)
            assert code == 0 and "green" in out
        finally:
            cfg.write_text(original)
    finally:
        gates.write_bytes(before)
