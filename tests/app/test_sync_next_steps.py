"""Every stop of ``vimesync sync`` leads somewhere (issue 29, items 18-20): the command a stop
prints is run as printed, through a real shell, in real repositories, and does what it says;
hostile names (paths a pull request adds, branch names) reach the shell as one quoted word."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import vimesync
from tests.builders.pair import Pair, build_pair
from tests.builders.syncdemo import sync_json
from vimesync import git

pytestmark = pytest.mark.slow  # real repositories, a carry and a shell per test

ROOT = Path(vimesync.__file__).parent.parent
CONTINUE = "vimesync sync --continue"
# Paths a shell would read as something else: each must reach vimesync as one word, and none runs.
HOSTILE = [
    "vime/$(touch PWNED)",
    "vime/`touch PWNED`",
    "vime/-rf x",
    "vime/--by=evil",
    "vime/a'b.py",
    "vime/semi;touch PWNED",
    'vime/q"uote $HOME.py',
]


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` as a maintainer pastes it into bash, ``vimesync`` being this clone's."""
    python = shlex.quote(sys.executable)
    bin_ = cwd.parent / "bin"
    bin_.mkdir(exist_ok=True)
    (bin_ / "vimesync").write_text(f'#!/bin/sh\nexec {python} -m vimesync "$@"\n')
    (bin_ / "vimesync").chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)


def printed(next_: str) -> tuple[Path, str]:
    """``in DIR: COMMAND, then vimesync sync --continue``: the folder and the command."""
    where, _, rest = next_.partition(": ")
    assert where.startswith("in ") and rest.endswith(f", then {CONTINUE}"), next_
    (folder,) = shlex.split(where[3:])
    return Path(folder), rest[: -len(f", then {CONTINUE}")]


def _pair_with_own_paths(tmp_path: Path, names: list[str]) -> tuple[Pair, str]:
    pair = build_pair(tmp_path)
    before = pair.down.head()
    pair.down.commit("downstream files", {n: "x = 1\n" for n in names})
    return pair, before


@pytest.mark.parametrize("count", [len(HOSTILE), 3])
def test_the_audit_stop_prints_a_command_that_records_the_reviews(tmp_path: Path, capsys, count: int) -> None:
    names = HOSTILE[:count]
    pair, before = _pair_with_own_paths(tmp_path, names)
    code, doc, err = sync_json(capsys, pair.down.path, "--baseline", before)
    assert code == 1 and doc["stopped"] == "audit", (doc, err)
    assert "…" not in doc["next"] and "..." not in doc["next"]
    folder, command = printed(doc["next"])
    assert folder == Path(doc["worktree"])
    if count > 5:
        assert "--all-unreviewed" in command  # no path pasted into a shell
    else:
        assert all(shlex.quote(n) in command for n in names)
    done = shell(command.replace("NAME", "'Mal Reviewer'"), folder)
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert not list(tmp_path.rglob("PWNED"))
    ledger = next((folder / "sop" / "reviews").glob("*.toml")).read_text()
    assert ledger.count("Mal Reviewer") == count
    code, doc, err = sync_json(capsys, pair.down.path, "--continue")
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["audit"]["ok"], (doc, err)
    assert steps["audit"]["figure"].endswith("changed paths, all reviewed or verified")


def test_all_unreviewed_takes_no_path_and_needs_one_to_review(tmp_path: Path, capsys) -> None:
    from tests.builders.pair import cli

    pair, before = _pair_with_own_paths(tmp_path, HOSTILE[:2])
    code, doc, _ = sync_json(capsys, pair.down.path, "--baseline", before)
    wt = Path(doc["worktree"])
    review = ("audit", "review", "--by", "M", "--baseline", before)
    code, _, err = cli(capsys, *review, "--all-unreviewed", "vime/x", cwd=wt)
    assert code == 2 and "--all-unreviewed takes no PATH" in err
    code, _, err = cli(capsys, *review, cwd=wt)
    assert code == 2 and "no PATH to review" in err
    code, _, err = cli(capsys, *review, "--all-unreviewed", cwd=wt)
    assert code == 0, err
    code, out, err = cli(capsys, *review, "--all-unreviewed", "--json", cwd=wt)
    assert code == 0 and json.loads(out)["reviews"] == [], err  # pasted twice: nothing more
    assert git.run(wt, ["status", "--porcelain"]).decode().strip().startswith("?? sop/")


# -- --abort after the carry ended, and the refusal of the next sync (item 20) ---------------------


def _stopped_after_the_carry(tmp_path: Path, capsys, *flags: str) -> tuple[Pair, dict]:
    pair, before = _pair_with_own_paths(tmp_path, ["vime/own.py"])
    code, doc, err = sync_json(capsys, pair.down.path, "--baseline", before, *flags)
    assert code == 1 and doc["stopped"] == "audit", (doc, err)
    return pair, doc


def _branches(repo: Path) -> list[str]:
    return git.run(repo, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"]).decode().split()


def test_abort_after_the_carry_removes_the_branch_and_worktree_it_made(tmp_path: Path, capsys) -> None:
    pair, doc = _stopped_after_the_carry(tmp_path, capsys)
    wt = Path(doc["worktree"])
    code, done, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and done["branch"] == doc["branch"] and done["worktree"] == str(wt)
    assert done["kept"] is None and not wt.exists() and _branches(pair.down.path) == ["main"]
    code, again, err = sync_json(capsys, pair.down.path)  # a new sync starts afresh
    assert code == 1 and _carried(again), (again, err)


def _commit_in(wt: Path, name: str) -> str:
    (wt / name).write_text("mine\n")
    git.run(wt, ["add", "--", name])
    git.run(wt, ["-c", "user.name=M", "-c", "user.email=m@x", "commit", "-qm", "a maintainer's work"])
    return git.resolve(wt, "HEAD")


@pytest.mark.parametrize("branch", [None, "sync/$(touch${IFS}PWNED);`touch${IFS}PWNED`&x"])
def test_abort_keeps_a_maintainers_commit_and_says_how_to_remove_it(
    tmp_path: Path, capsys, branch: str | None
) -> None:
    flags = ("--branch", branch) if branch else ()
    pair, doc = _stopped_after_the_carry(tmp_path, capsys, *flags)
    wt = Path(doc["worktree"])
    mine = _commit_in(wt, "mine.txt")
    code, done, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and done["branch"] is None
    assert done["kept"] == (
        f"kept the branch {doc['branch']} and its worktree {wt}: it has 1 commit(s) beyond the sync's own"
    )
    assert git.resolve(pair.down.path, doc["branch"]) == mine and wt.is_dir()  # nothing lost
    # The next sync is refused by the branch in its way; its advice, run as printed, clears it.
    code, _, err = cli_sync(capsys, pair.down.path, *flags)
    assert code == 2 and "already exists" in err
    hint = err.split("hint: ", 1)[1]
    assert hint.startswith("in ") and f", then {CONTINUE} (if nothing on it is needed); or " in hint
    folder, command = printed(hint.split(" (if nothing on it is needed)")[0])
    assert command == f"{done['remove'].split(': ', 1)[1]}"
    ran = shell(command, folder)
    assert ran.returncode == 0, (command, ran.stderr)
    assert not list(tmp_path.rglob("PWNED")) and not wt.exists() and _branches(pair.down.path) == ["main"]
    code, doc, err = sync_json(capsys, pair.down.path, "--continue")
    assert code == 1 and _carried(doc), (doc, err)


def _carried(doc: dict) -> bool:
    carry = next(s for s in doc["steps"] if s["name"] == "carry")
    return bool(carry["ok"] and not carry["reused"] and carry["figure"].startswith("3 carried onto"))


def test_abort_keeps_a_worktree_with_an_uncommitted_review(tmp_path: Path, capsys) -> None:
    pair, doc = _stopped_after_the_carry(tmp_path, capsys)
    wt = Path(doc["worktree"])
    _, command = printed(doc["next"])
    assert shell(command.replace("NAME", "M"), wt).returncode == 0  # the ledger, not committed
    code, done, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and done["branch"] is None
    assert done["kept"].endswith(f"its worktree {wt} has changes not committed")
    assert next((wt / "sop" / "reviews").glob("*.toml")).is_file()
    # Run as printed, git itself refuses to drop the uncommitted review: nothing is lost.
    folder, command = printed(done["remove"] + f", then {CONTINUE}")
    assert shell(command, folder).returncode != 0 and wt.is_dir()


def cli_sync(capsys, cwd: Path, *args: str) -> tuple[int, str, str]:
    from tests.builders.pair import cli

    return cli(capsys, "sync", *args, cwd=cwd)
