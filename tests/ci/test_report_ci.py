"""The report's Validation section carries the exact-head CI, and its gates decide the exit code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakegithub import TOKEN, FakeGitHub, serve
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo


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
    args = ["report", "--baseline", demo.baseline, "--sync", "ci-test", "--skip-gate", "audit"]
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
        "- ✗ **ci**: failed — pending at" in md and "- – **audit**: off — switched off with --skip-gate" in md
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
    code, _, _ = run([*args, "--skip-gate", "ci"], capsys)
    assert code == 0


def test_gates_file_switches_a_gate_off_with_its_reason(
    demo: Demo, capsys, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(demo.downstream)
    gates = demo.downstream / "sop/gates.toml"
    before = gates.read_bytes() if gates.exists() else None
    gates.write_text('[off]\nci = "CI runs on an internal Jenkins"\naudit = "audited by hand"\n')
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
    assert list(cases) == ["classified", "patches", "audit", "ci"]
    assert suite.failures == 1 and suite.skipped == 1  # ci not checked; audit switched off
    assert "not checked" in cases["ci"].result[0].message
    assert "::error title=sync gate ci%3A not checked::" in out
    assert summary.read_text().startswith("\n## Summary")  # the whole report, appended
