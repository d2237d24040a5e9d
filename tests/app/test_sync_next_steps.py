"""Every stop of ``vimesync sync`` leads somewhere (issue 29, items 18-20): the command a stop
prints is run as printed, through a real shell, in real repositories, and does what it says;
hostile names (paths a pull request adds, branch names) reach the shell as one quoted word."""

from __future__ import annotations

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
    code, _, err = cli(capsys, *review, "--all-unreviewed", cwd=wt)
    assert code == 2 and "no path is unreviewed or stale" in err
    assert git.run(wt, ["status", "--porcelain"]).decode().strip().startswith("?? sop/")
