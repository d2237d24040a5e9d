"""End-to-end ``vimesync audit`` runs on small real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.cli.app import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, " ".join(err.split())  # rich wraps long messages


@pytest.fixture
def audit_args(tmp_path: Path) -> list[str]:
    """``audit`` options for a downstream whose sync (HEAD) changed one file, unlike upstream."""
    up = Repo(tmp_path / "up")
    up.commit("upstream", {"slime/a.py": "a = 2\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {"vime/a.py": "a = 1\n"})
    down.commit("sync", {"vime/a.py": "a = 3\n"})
    return ["audit", "--downstream", str(down.path), "--upstream", str(up.path), "--sync", "s"]


def test_one_unreviewed_path_is_singular(capsys: pytest.CaptureFixture[str], audit_args: list[str]) -> None:
    code, out, _ = run(capsys, *audit_args, "--baseline", "HEAD~1", "--map", "slime/=vime/")
    assert code == 1
    assert "1 changed path " in out and "FAILED: 1 path needs review" in out
    # review takes --sync or the upstream options that name the ledger, not both
    down = audit_args[audit_args.index("--downstream") + 1]
    code, out, _ = run(
        capsys,
        "audit",
        "review",
        "vime/a.py",
        "--by",
        "al",
        "--downstream",
        down,
        "--sync",
        "s",
        "--baseline",
        "HEAD~1",
    )
    assert code == 0 and "recorded 1 review by al" in out


@pytest.mark.slow
def test_review_records_only_what_the_sync_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    up = Repo(tmp_path / "up")
    up.commit("upstream", {"slime/a.py": "a = 2\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {f"vime/f{i}.py": f"x = {i}\n" for i in range(6)})
    review = ["--downstream", str(down.path), "--sync", "s"]
    args = [*review, "--upstream", str(up.path)]
    # On main itself there is no telling where the sync began: refused, nothing recorded.
    code, out, err = run(capsys, "audit", "review", "vime", "--by", "al", *review)
    assert code == 2 and "cannot tell which paths the sync changed" in err and "--baseline REV" in err
    assert not (down.path / "sop").exists()
    code, out, err = run(capsys, "audit", *args)
    assert code == 2 and "cannot tell which paths the sync changed" in err
    # A sync branch off main: the baseline is where it left main; a folder is its changed files.
    down.branch("sync/x")
    down.commit("sync", {"vime/f1.py": "x = 10\n", "vime/f4.py": "x = 40\n", "vime/new.py": "n = 1\n"})
    code, out, err = run(capsys, "audit", "review", "vime", "--by", "al", *review, "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["reviews"]] == ["vime/f1.py", "vime/f4.py", "vime/new.py"]
    assert "--baseline" in err and "the merge-base of HEAD and main" in err
    code, out, err = run(capsys, "audit", "review", "vime/f2.py", "--by", "al", *review)
    assert code == 2 and "vime/f2.py: no such path changed since the baseline" in err
    code, out, err = run(capsys, "audit", *args)
    assert code == 0, err


@pytest.mark.parametrize("json_", [False, True])
def test_reversed_baseline_exits_2(
    capsys: pytest.CaptureFixture[str], audit_args: list[str], json_: bool
) -> None:
    extra = ["--json"] if json_ else []
    code, out, err = run(capsys, *audit_args, "--baseline", "HEAD", "--head", "HEAD~1", *extra)
    assert code == 2 and "Traceback" not in err
    assert "the range is reversed; did you mean --baseline HEAD~1 --head HEAD?" in err
    if json_:
        assert json.loads(out)["exit_code"] == 2
    else:
        assert out == ""


@pytest.mark.parametrize("map_", ["=x/", "slime/="])
def test_empty_side_of_map_exits_2(
    capsys: pytest.CaptureFixture[str], audit_args: list[str], map_: str
) -> None:
    code, out, err = run(capsys, *audit_args, "--baseline", "HEAD~1", "--map", map_)
    assert code == 2 and out == ""
    assert f"path map '{map_}': SRC and DST must both name a path" in err
