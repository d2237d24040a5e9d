"""End-to-end ``vimesync walk`` runs in real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.gitrepo import Repo
from tests.builders.upstream import POLICY, Upstream, build_downstream, build_upstream
from vimesync.cli.app import main


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("up") / "slime")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def walk_github(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str
) -> tuple[int, str, str]:
    """``walk --github --json`` against the loopback GitHub (PRs 1-11; #10 closed unmerged)."""
    config = tmp_path / "vimesync.toml"
    config.write_text('[upstream]\nrepo = "THUDM/slime"\n')
    with serve(FakeGitHub(range(1, 12))) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        return run(capsys, "walk", *args, "--github", "--json", "--config", str(config))


@pytest.mark.slow
def test_json_document(capsys: pytest.CaptureFixture[str], tmp_path: Path, upstream: Upstream) -> None:
    pol = tmp_path / "policy.toml"
    pol.write_text(POLICY)
    s = upstream.shas
    code, out, err = run(
        capsys,
        "walk",
        "--upstream",
        str(upstream.path),
        "--range",
        f"{s['root'][:8]}..main",
        "--policy",
        str(pol),
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)  # exactly one document
    assert doc["range"] == {"base": s["root"], "tip": s["pr10"]}
    assert [p["number"] for p in doc["prs"]] == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    pr3 = doc["prs"][2]
    assert (
        pr3["commits"][-1] == s["pr3"]
        and len(pr3["commits"]) == 5
        and all(len(c) == 40 for c in pr3["commits"])
    )
    assert pr3["paths"] == ["slime/big.py", "slime/helper.py"]
    assert {k: pr3[k] for k in ("status", "reason", "rule")} == {
        "status": "applicable",
        "reason": "",
        "rule": None,
    }
    pr6 = doc["prs"][5]
    assert (pr6["status"], pr6["rule"]) == ("excluded", 2)
    assert doc["direct_commits"] == [
        {
            "sha": s["direct1"],
            "title": "fix typo",
            "paths": ["README.md"],
            "reverts": None,
            "mirrored_by": None,
        },
        {
            "sha": s["direct2"],
            "title": 'Revert "Merge pull request #2 from alice/feat"',
            "paths": ["docs/bar.md", "slime/bar.py"],
            "reverts": 2,
            "mirrored_by": None,
        },
    ]
    assert doc["totals"] == {"prs": 9, "applicable": 7, "excluded": 2, "mirrored": 0, "direct_commits": 2}


@pytest.mark.slow
def test_table_with_downstream(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, upstream: Upstream
) -> None:
    down = build_downstream(tmp_path / "down", upstream)
    (tmp_path / "pins").mkdir()
    (tmp_path / "pins" / "slime.toml").write_text(
        f'[upstream]\nrepo = "THUDM/slime"\nsynced = "{upstream.shas["root"]}"\n'
    )
    (tmp_path / "policy.toml").write_text(POLICY)
    (tmp_path / "vimesync.toml").write_text(
        f'[upstream]\nname = "Slime"\nrepo = "THUDM/slime"\npath = "{upstream.path}"\nbranch = "main"\n'
        'pin = "pins/slime.toml"\npolicy = "policy.toml"\nmap = ["slime/=vime/"]\n'
        f'[downstream]\npath = "{down.path}"\n'
    )
    code, out, err = run(capsys, "walk", "--config", str(tmp_path / "vimesync.toml"))
    assert code == 0, err
    assert "#9" in out and "mirrored as requested" in out and "already downstream" in out
    # The conflict-edited port matches by similar content only: it looks mirrored, and stays
    # applicable until carried or accepted (issue 18, finding 2).
    assert "9 PRs: 4 applicable, 2 excluded, 3 mirrored; 2 direct commits" in out
    assert "looks mirrored" in out


def test_nothing_to_sync(capsys: pytest.CaptureFixture[str], upstream: Upstream) -> None:
    code, out, _ = run(capsys, "walk", "--upstream", str(upstream.path), "--range", "main..main")
    assert code == 0 and "nothing to sync" in out
    code, out, _ = run(capsys, "walk", "--upstream", str(upstream.path), "--range", "main..main", "--json")
    assert code == 0 and json.loads(out)["message"] == "nothing to sync"


def test_base_not_ancestor_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = Repo(tmp_path / "r")
    r.commit("one", {"a": "1"})
    r.commit("two", {"a": "2"})
    r.branch("side", "HEAD~1")
    r.commit("side", {"b": "1"})
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", "side..main")
    assert code == 2 and out == ""
    assert "is not an ancestor" in err and "merge-base" in err and "Traceback" not in err


@pytest.mark.parametrize("json_", [False, True])
def test_reversed_range_exits_2(capsys: pytest.CaptureFixture[str], upstream: Upstream, json_: bool) -> None:
    s = upstream.shas
    args = [
        "walk",
        "--upstream",
        str(upstream.path),
        "--range",
        "main..main~8",
        *(["--json"] if json_ else []),
    ]
    code, out, err = run(capsys, *args)
    assert code == 2 and "nothing to sync" not in out + err
    assert f"TIP main~8 ({s['pr3'][:12]}) is an ancestor of BASE main ({s['pr10'][:12]})" in err
    assert "the range is reversed; did you mean main~8..main?" in " ".join(err.split())
    if json_:
        doc = json.loads(out)
        assert doc["exit_code"] == 2 and "did you mean main~8..main?" in doc["error"]


def _one_pr_repo(path: Path, message: str, files: dict[str, str | bytes | None]) -> Repo:
    r = Repo(path)
    r.commit("start", {"README.md": "x\n"})
    r.commit(message, files)
    return r


def test_partly_excluded_reason_in_table_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = _one_pr_repo(tmp_path / "r", "Add a (#1)", {"slime/a.py": "a\n", "docker/npu_patch/a.patch": "p\n"})
    pol = tmp_path / "policy.toml"
    pol.write_text(POLICY)
    base = ["walk", "--upstream", str(r.path), "--range", "HEAD~1..HEAD", "--policy", str(pol)]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    assert "partly in excluded paths: docker/npu_patch/a.patch" in " ".join(out.split())
    code, out, err = run(capsys, *base, "--json")
    pr = json.loads(out)["prs"][0]
    assert (pr["status"], pr["partial_paths"]) == ("applicable", ["docker/npu_patch/a.patch"])
    assert pr["reason"] == "partly in excluded paths: docker/npu_patch/a.patch"


@pytest.mark.parametrize(
    "message,totals",
    [
        ("Add a (#1)", "1 PR: 1 applicable, 0 excluded, 0 mirrored; 0 direct commits"),
        ("direct fix", "0 PRs: 0 applicable, 0 excluded, 0 mirrored; 1 direct commit"),
    ],
)
def test_totals_singular(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, message: str, totals: str
) -> None:
    r = _one_pr_repo(tmp_path / "r", message, {"a.py": "a\n"})
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", "HEAD~1..HEAD")
    assert code == 0, err
    assert totals in out.splitlines()


def test_help_shows_rule_tables(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "walk", "--help")
    assert code == 0 and "Policy TOML ([[rule]] tables; default: config)." in out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--range", "nope..main"], "unknown revision 'nope'"),
        (["--range", "main...main"], "symmetric difference"),
        ([], "no --range given"),
    ],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, args: list[str], message: str
) -> None:
    code, _, err = run(capsys, "walk", "--upstream", str(upstream.path), *args)
    assert code == 2 and message in err


def test_not_a_repo_and_bad_policy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, upstream: Upstream
) -> None:
    code, _, err = run(capsys, "walk", "--upstream", str(tmp_path), "--range", "main")
    assert code == 2 and "not a git repository" in err
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "("\n')
    code, _, err = run(
        capsys, "walk", "--upstream", str(upstream.path), "--range", "main", "--policy", str(pol)
    )
    assert code == 2 and f"{pol}:4: rule 1: bad title regex" in err.replace("\n", "")


def test_github_metadata_drives_a_labels_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\naction = "exclude"\nreason = "NPU label"\nlabels = ["npu"]\n')
    args = ["--upstream", str(upstream.path), "--range", "main", "--policy", str(pol)]
    code, out, err = walk_github(capsys, monkeypatch, tmp_path, *args)
    assert code == 0, err
    doc = json.loads(out)
    by = {p["number"]: p for p in doc["prs"]}
    assert by[6]["labels"] == ["npu"] and by[6]["status"] == "excluded" and by[6]["title"] == "PR title 6"
    assert by[4]["status"] == "applicable" and by[4]["author"] == "user4"
    assert doc["notes"] == ["GitHub has no merged PR for 1 of the 9 PR numbers"]  # #10: closed unmerged
    assert TOKEN not in out + err


def test_github_note_for_a_single_unmerged_pr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _one_pr_repo(tmp_path / "r", "Closed one (#10)", {"a.py": "a\n"})
    code, out, err = walk_github(
        capsys, monkeypatch, tmp_path, "--upstream", str(r.path), "--range", "HEAD~1..HEAD"
    )
    assert code == 0, err
    assert json.loads(out)["notes"] == ["GitHub has no merged PR #10"]


def test_junit_has_one_case_per_pr_and_no_failure(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, tmp_path: Path
) -> None:
    import xml.etree.ElementTree as ET

    junit = tmp_path / "walk.xml"
    args = ["walk", "--upstream", str(upstream.path), "--range", "main", "--json", "--junit", str(junit)]
    code, out, _ = run(capsys, *args, "--annotations", "none")
    doc = json.loads(out)
    assert code == 0 and doc["kind"] == "walk" and doc["ok"] is True and doc["exit_code"] == 0
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == len(doc["prs"]) and not ET.parse(junit).getroot().findall(".//failure")
