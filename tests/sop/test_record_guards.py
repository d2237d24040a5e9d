"""What every record of what ran at the head checks before it is written (issue 29 items 5 and 7):
a record binds to HEAD, so ``sop record tests``, ``run``, ``ci``, ``precommit`` and ``sop
regress`` are refused while tracked files differ from HEAD, naming them (escaped, counted), but
the sync's own records file and review ledger, the tree read through the disarmed git (no
filter the repository names runs); and a record of the same name at the same evidence head is
replaced only with ``--replace``, which says what it replaced."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo, commit_env
from vimesync import git
from vimesync.cli.app import main
from vimesync.demo.build import Demo
from vimesync.errors import GitError
from vimesync.git import repocheck

JUNIT = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.fixture
def clean(demo: Demo) -> Iterator[Demo]:
    """The demo, its sync worktree put back at its head after the test (tracked files only: the
    records the test wrote are removed by ``demo``)."""
    yield demo
    git.run(demo.downstream, ["reset", "-q", "--hard", demo.head])


def _records(tmp_path: Path) -> dict[str, list[str]]:
    """Every record command as a test runs it (none reaches its work on a modified tree)."""
    junit = tmp_path / "r.xml"
    junit.write_text(JUNIT)
    return {
        "tests": ["sop", "record", "tests", "--suite", "unit", "--junit", str(junit)],
        "run": ["sop", "record", "run", "--name", "unit", "--exit", "0"],
        "ci": ["sop", "record", "ci"],
        "precommit": ["sop", "record", "precommit"],
        "regress": ["sop", "regress", "--test", "tests/test_buffer.py::test_x"],
    }


@pytest.mark.parametrize("command", ["tests", "run", "ci", "precommit", "regress"])
def test_every_record_is_refused_while_a_tracked_file_differs_from_head(
    clean: Demo, capsys, tmp_path: Path, command: str
) -> None:
    (clean.downstream / "train.py").write_text("# changed, not committed\n")
    code, out, err = run(_records(tmp_path)[command], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert " ".join(err.split()) == (
        f"error: 1 tracked file differs from HEAD {clean.head[:12]} ('train.py'): a record binds to"
        " HEAD, not to a modified tree; commit or stash them, then record again"
    )
    assert not (clean.downstream / "sop/records").exists()


def test_a_staged_or_deleted_file_is_a_modified_tree_an_untracked_one_is_not(
    clean: Demo, capsys, tmp_path: Path
) -> None:
    argv = _records(tmp_path)["run"]
    (clean.downstream / "new_module.py").write_text("x = 1\n")  # untracked: not HEAD's either, not looked at
    (clean.downstream / "train.py").write_text("# staged\n")
    git.run(clean.downstream, ["add", "train.py"])
    (clean.downstream / "README.md").unlink()
    code, _, err = run(argv, capsys)
    assert code == 2 and "2 tracked files differ from HEAD" in err and "('README.md', 'train.py')" in err
    # --head names another commit: the tree that ran is the checkout's all the same, named by its HEAD
    code, _, err = run([*argv, "--head", "HEAD~1"], capsys)
    assert code == 2 and f"2 tracked files differ from HEAD {clean.head[:12]} (" in err
    git.run(clean.downstream, ["reset", "-q", "--hard", clean.head])
    # a file only touched (its content unchanged) is not modified
    os.utime(clean.downstream / "train.py", (1, 1))
    code, _, err = run(argv, capsys)
    assert code == 0, err


def test_the_syncs_own_records_file_and_review_ledger_may_differ(clean: Demo, capsys, tmp_path: Path) -> None:
    """vimesync's own bookkeeping of the sync: the ledger (tracked in the demo) and the records
    file being written, committed and then changed, are not a modified tree; another sync's
    records file, or any other file under sop/, is."""
    records = _records(tmp_path)
    assert run(records["run"], capsys)[0] == 0
    (sync_file,) = (clean.downstream / "sop/records").iterdir()
    git.run(clean.downstream, ["add", "sop/records"])
    git.run(clean.downstream, ["commit", "-qm", "record"], env=commit_env())
    ledger = next((clean.downstream / "sop/reviews").iterdir())
    ledger.write_text(ledger.read_text() + "\n# a review not committed yet\n")
    code, _, err = run(records["tests"], capsys)  # the records file now differs from HEAD too
    assert code == 0, err
    assert "tests" in sync_file.read_text()
    other = clean.downstream / "sop/records/other.toml"
    other.write_text("# another sync\n")
    git.run(clean.downstream, ["add", "sop/records/other.toml"])
    code, _, err = run([*records["run"], "--name", "lab"], capsys)
    assert code == 2 and "('sop/records/other.toml')" in err


def test_hostile_modified_names_are_shown_escaped_cut_and_counted(
    clean: Demo, capsys, tmp_path: Path
) -> None:
    """A pull request names the files: each is shown quoted with its control, bidi and
    undecodable characters escaped, cut to 100 characters, at most three, the rest counted."""
    names = [
        "a\x1b[2J\x07.py",
        "b\nerror: forged.py",
        "c\u202egnp.py",
        "d" * 150 + ".py",
        "e::warning::x.py",
    ]
    raw = [n.encode() for n in names] + [b"f\xff.py"]
    for name in raw:
        with open(os.path.join(os.fsencode(clean.downstream), name), "wb") as fh:
            fh.write(b"1\n")
    git.run(clean.downstream, ["add", "-A", "--", *(n.decode("utf-8", "surrogateescape") for n in raw)])
    git.run(clean.downstream, ["commit", "-qm", "hostile names"], env=commit_env())
    head = git.resolve(clean.downstream, "HEAD")
    for name in raw:
        with open(os.path.join(os.fsencode(clean.downstream), name), "wb") as fh:
            fh.write(b"2\n")
    code, _, err = run(_records(tmp_path)["run"], capsys)
    assert code == 2
    (line,) = err.splitlines()
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err
    assert f"6 tracked files differ from HEAD {head[:12]} ('a\\x1b[2J\\x07.py', " in line
    assert "'b\\nerror: forged.py', 'c\\u202egnp.py' and 3 more)" in line
    code, out, err = run([*_records(tmp_path)["run"], "--json"], capsys)
    assert code == 2 and json.loads(out)["kind"] == "error" and out.isascii()
    # the sixth, undecodable name and the long one, once the others are committed
    git.run(clean.downstream, ["add", "-A", "--", *(n.decode("utf-8", "surrogateescape") for n in raw[:3])])
    git.run(clean.downstream, ["commit", "-qm", "some"], env=commit_env())
    code, _, err = run(_records(tmp_path)["run"], capsys)
    assert code == 2 and f"'{'d' * 96}…" not in err and f"'{'d' * 100}'…" in err
    assert "'f\\udcff.py'" in err and "'e::warning::x.py'" in err


def _lfs_repo(tmp_path: Path) -> tuple[Repo, Path, Path]:
    """A repository whose files all go through git-lfs's filters (the three values ``git lfs
    install`` writes), a fake ``git-lfs`` first on PATH that leaves a marker when run, and one
    tracked file whose content changed while its size did not (git must hash it)."""
    repo = Repo(tmp_path / "r")
    repo.commit("code", {"a.py": "1\n", ".gitattributes": "* filter=lfs\n"})
    for key, value in repocheck._GIT_LFS.items():
        git.run(repo.path, ["config", key, value])
    marker = tmp_path / "lfs-ran"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git-lfs"
    fake.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    fake.chmod(0o755)
    (repo.path / "a.py").write_text("2\n")
    os.utime(repo.path / "a.py", (2_000_000_000, 2_000_000_000))
    return repo, bin_dir, marker


def test_no_filter_runs_while_the_tree_is_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, bin_dir, marker = _lfs_repo(tmp_path)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    # the plant is live: git status as a careless tool runs it starts the filter
    env = {"PATH": path, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "status", "--porcelain"], cwd=repo.path, env=env, check=True, capture_output=True)
    assert marker.exists()
    marker.unlink()
    monkeypatch.setenv("PATH", path)
    assert git.modified_paths(repo.path) == ("a.py",)
    assert not marker.exists()
    # a filter the repository names itself is refused, never run
    git.run(repo.path, ["config", "filter.evil.clean", f"touch '{marker}'"])
    (repo.path / ".git/info/attributes").write_text("* filter=evil\n")
    with pytest.raises(GitError, match="filter.evil.clean"):
        git.modified_paths(repo.path)
    assert not marker.exists()


def test_status_output_is_parsed_from_its_nul_separated_fields() -> None:
    assert git.parse_status_z(b" M a b.py\0M  c\nd\0D  e\0UU f\0") == ("a b.py", "c\nd", "e", "f")
    assert git.parse_status_z(b"R  new\0old\0 M x\0") == ("new", "old", "x")
    assert git.parse_status_z(b"") == ()


def test_a_run_recorded_again_at_the_same_head_is_refused_or_replaced_saying_so(
    clean: Demo, capsys, tmp_path: Path
) -> None:
    """Issue 29 item 7: exit 0 became 3 and its figures were lost, with no word."""
    first = ["sop", "record", "run", "--name", "unit", "--exit", "0", "--duration", "4m03s"]
    assert run([*first, "--figure", "rollouts=3", "--host", "h200-01"], capsys)[0] == 0
    again = ["sop", "record", "run", "--name", "unit", "--exit", "3"]
    code, _, err = run(again, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert " ".join(err.split()).startswith(
        f"error: run 'unit' is already recorded at {clean.head[:8]}"
        " (exit 0 in 4m03s on h200-01 (rollouts 3), typed, recorded "
    )
    assert err.rstrip().endswith("): pass --replace to replace it")
    (file,) = (clean.downstream / "sop/records").iterdir()
    assert "exit = 0" in file.read_text() and "exit = 3" not in file.read_text()
    code, out, err = run([*again, "--replace", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["record"]["exit"] == 3
    old = doc["replaced"]
    assert (old["kind"], old["exit"], old["figures"], old["host"]) == ("run", 0, {"rollouts": "3"}, "h200-01")
    assert doc["notes"] == [
        f"replaced the run 'unit' recorded at {clean.head[:8]}"
        f" (exit 0 in 4m03s on h200-01 (rollouts 3), typed, recorded {old['recorded_at']})"
    ]
    code, out, err = run([*again, "--replace"], capsys)
    assert (
        code == 0
        and "warning: replaced the run 'unit' recorded at" in err
        and "(exit 3, typed, recorded" in err
    )
    # a suite of the same name is another record: neither refused nor replacing
    code, out, err = run(_records(tmp_path)["tests"], capsys)
    assert code == 0 and err == ""
    # --replace with nothing to replace records and says nothing of a replacement
    code, out, err = run(
        ["sop", "record", "run", "--name", "lab", "--exit", "0", "--replace", "--json"], capsys
    )
    assert code == 0 and json.loads(out)["replaced"] is None and err == ""


def test_a_planted_record_is_named_inert_when_it_refuses_one(clean: Demo, capsys, tmp_path: Path) -> None:
    """A pull request may plant a record at the evidence head so that the maintainer's is
    refused: the refusal names its values as one inert line (no markup obeyed, no workflow
    command at a line's start), and --replace replaces it."""
    records = clean.downstream / "sop/records"
    records.mkdir()
    name = json.loads(run(["sop", "record", "run", "--name", "x", "--exit", "0", "--json"], capsys)[1])[
        "sync"
    ]
    (records / f"{name}.toml").write_text(
        f'[runs.unit.{clean.head}]\nexit = 0\nhost = "h"\n'
        'figures = { a = "[red]pass --replace[/red] ::error::x ##[warning]y" }\n'
    )
    code, _, err = run(["sop", "record", "run", "--name", "unit", "--exit", "3"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "(exit 0 on h (a [red]pass --replace[/red] ::error::x #\\x23[warning]y), typed" in err
    code, out, err = run(
        ["sop", "record", "run", "--name", "unit", "--exit", "3", "--replace", "--json"], capsys
    )
    assert code == 0 and out.isascii() and "##[" not in out
    assert json.loads(out)["replaced"]["figures"] == {
        "a": "[red]pass --replace[/red] ::error::x ##[warning]y"
    }
