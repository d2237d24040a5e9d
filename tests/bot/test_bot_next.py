"""A draft PR's Next command, run as a maintainer would (issue 32): the sync stopped at the audit,
the maintainer follows the command word for word in a clone of the fork, and the branch they push
holds their review (the ledger), so the PR's head is what they reviewed."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.builders.botrun import bot, maintainer_push, passing
from tests.builders.pair import cli
from vimesync import git

pytestmark = pytest.mark.slow  # real syncs in real repositories

FILE = {"GIT_ALLOW_PROTOCOL": "file"}
OURS = "# vime keeps a note here\n\n\n\n\ndef f():\n    return 1\n"  # apart from upstream's change


def test_following_an_audit_stops_next_pushes_the_review(fork, capsys) -> None:
    pair, fake = fork
    passing(pair)
    pair.down.commit("main's note in util.py", {"vime/util.py": OURS})
    maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["sync"]["stopped"] == "audit", err
    pull = fake.open_pull()
    assert pull["draft"] is True
    (line,) = [ln for ln in pull["body"].splitlines() if ln.startswith("Next: ")]
    steps = re.split(r", then |; then | && ", line.split("`", 1)[1].rsplit("`", 1)[0])
    clone = pair.root / "maint"
    git.run(pair.root, ["clone", "-q", "-b", "main", str(fake.remote), str(clone)], env=FILE)
    ident = {
        "GIT_AUTHOR_NAME": "m",
        "GIT_AUTHOR_EMAIL": "m@x",
        "GIT_COMMITTER_NAME": "m",
        "GIT_COMMITTER_EMAIL": "m@x",
        **FILE,
    }
    where = {
        "a checkout of main": clone,
        "<the sync's worktree>": clone.parent / f"maint.{doc['branch'].replace('/', '-')}",
    }
    cwd = clone
    for step in steps:
        found = re.match(r"in (a checkout of main|<the sync's worktree>): (.*)", step)
        if found:
            cwd, step = where[found[1]], found[2]
        words = shlex.split(step.replace("NAME", "maint"))
        if words[0] == "git":
            git.run(cwd, words[1:], env=ident)
        else:
            assert words[0] == "vimesync", step
            code, out, err = cli(capsys, *words[1:], cwd=cwd)
            assert code == 0 or words[1:3] == ["sync", "--branch"], (step, out, err)
    head = fake.head_of(doc["branch"])
    assert head is not None and head != doc["sync"]["head"]
    # the pushed head holds the review the maintainer made (today: left untracked in the worktree)
    files = git.run(fake.remote, ["ls-tree", "-r", "--name-only", head, "sop/reviews"]).decode().split()
    assert len(files) == 1 and files[0].endswith(".toml")


def run_next(capsys, pair, fake, line: str, branch: str) -> None:
    """A Next command, step by step, in a maintainer's clone of the fork (resolving the conflict
    in vime/c.py where it says to resolve)."""
    steps = re.split(r", then |; then | && ", re.sub(r" \(or [^)]*\)", "", line))
    clone = pair.root / "maint"
    git.run(pair.root, ["clone", "-q", "-b", "main", str(fake.remote), str(clone)], env=FILE)
    ident = {
        "GIT_AUTHOR_NAME": "m",
        "GIT_AUTHOR_EMAIL": "m@x",
        "GIT_COMMITTER_NAME": "m",
        "GIT_COMMITTER_EMAIL": "m@x",
    }
    worktree = clone.parent / f"maint.{branch.replace('/', '-')}"
    where = {"a checkout of main": clone, "<the sync's worktree>": worktree}
    cwd = clone
    for step in steps:
        found = re.match(r"in (a checkout of main|<the sync's worktree>): (.*)", step)
        if found:
            cwd, step = where[found[1]], found[2]
        if step.startswith("resolve the files in"):
            assert step.endswith(", git add them"), step
            (worktree / "vime/c.py").write_text("import vime.c  # ours, and upstream's\n")
            git.run(worktree, ["add", "-A"], env=ident)
            continue
        words = shlex.split(step.replace("NAME", "maint"))
        if words[0] == "git":
            git.run(cwd, words[1:], env={**ident, **FILE})
        else:
            code, out, err = cli(capsys, *words[1:], cwd=cwd)
            assert code == 0 or words[1] == "sync", (step, out, err)  # it may stop at the next decision


def test_a_branch_pushed_after_a_stop_with_nothing_to_push_gets_its_pr(fork, capsys) -> None:
    """The sync stopped at a conflict before it made a commit: no PR, the dashboard names the Next
    command. The maintainer follows it and pushes sync/<tip8>; the next run opens the PR of their
    branch (never pushing to it) instead of telling them to delete it."""
    pair, fake = fork
    passing(pair)
    pair.down.commit("main's own c.py", {"vime/c.py": "import vime.c  # ours\n"})  # upstream #1 adds it
    maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["sync"]["stopped"] == "carry" and doc["sync"]["head"] is None, err
    assert fake.pulls == {}
    (line,) = [ln for ln in fake.dashboard()["body"].splitlines() if ln.startswith("Next: ")]
    branch = f"sync/{pair.tip[:8]}"
    run_next(capsys, pair, fake, line.split("`", 1)[1].rsplit("`", 1)[0], branch)
    theirs = fake.head_of(branch)
    assert theirs is not None
    git.run(pair.down.path, ["fetch", "-q", "origin"], env=FILE)  # the job's checkout: every branch
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "adopt", err  # today: stale-branch, "delete it"
    pull = fake.open_pull()
    assert pull["head"] == branch and pull["draft"] is False and fake.head_of(branch) == theirs
    assert "commits the bot did not push" in pull["body"] and "--delete" not in fake.dashboard()["body"]
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)  # nothing new: held now, and nothing to write
    assert code == 0 and doc["case"] == "hold" and doc["writes"] == [] and len(fake.writes) == writes, err
    pair.up.commit("Add g (#6)", {"slime/g.py": "from slime import x\n"})
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "hold" and fake.head_of(branch) == theirs, err
    assert "#6 " in fake.open_pull()["body"]
