"""Every stop of ``vimesync sync`` leads somewhere (issue 29, items 18-20): the command a stop
prints is run as printed, through a real shell, in real repositories, and does what it says;
hostile names (paths a pull request adds, branch names) reach the shell as one quoted word."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.builders.pair import Pair, build_pair
from tests.builders.shell import shell
from tests.builders.syncdemo import sync_json
from vimesync import git

pytestmark = pytest.mark.slow  # real repositories, a carry and a shell per test

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


# -- a PR skipped at a conflict is carried by the command the stop prints (item 18) ---------------


def _skipped(tmp_path: Path, capsys, *flags: str) -> tuple[Pair, Path, dict]:
    """A sync stopped at #2's conflict, `vimesync carry --skip` run as its stop says, then the
    sync going on: it stops at the carried gate."""
    pair = build_pair(tmp_path)
    pair.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    code, doc, _ = sync_json(capsys, pair.down.path, *flags)
    assert code == 1 and "vimesync carry --skip" in doc["next"]
    wt = Path(doc["worktree"])
    assert doc["next"].startswith(f"resolve the files in {shlex.quote(str(wt))}, git add them, ")
    skipped = shell("vimesync carry --skip", wt)
    assert skipped.returncode == 0, skipped.stderr
    code, doc, err = sync_json(capsys, wt, "--continue")
    assert code == 1 and doc["stopped"] == "status", (doc, err)
    assert doc["decision"] == "carried: 1 applicable PR not carried at the head: #2"
    assert doc["next"] == f"in {shlex.quote(str(wt))}: vimesync carry --pr 2, then {CONTINUE}"
    return pair, wt, doc


def _carried_gate(capsys, wt: Path) -> str:
    from tests.builders.pair import cli

    _, out, _ = cli(capsys, "sop", "status", "--json", cwd=wt)
    return next(g for g in json.loads(out)["gates"] if g["name"] == "carried")["state"]


@pytest.mark.parametrize("worktree", [None, "w $(touch PWNED);`touch PWNED`'q"])
def test_the_printed_carry_brings_the_skipped_pr_onto_the_sync_branch(
    tmp_path: Path, capsys, worktree: str | None
) -> None:
    flags = ("--worktree", str(tmp_path / worktree)) if worktree else ()
    pair, wt, doc = _skipped(tmp_path, capsys, *flags)
    assert wt.name == (worktree or wt.name)
    folder, command = printed(doc["next"])
    tip = git.resolve(wt, "HEAD")
    ran = shell(command, folder)
    # The same conflict as before, now on the sync's own branch, in its worktree; no warning that
    # #2 is not in the range.
    assert ran.returncode == 1 and "conflict #2 Change a and util" in ran.stdout, ran.stderr
    assert "is not a PR of" not in ran.stderr
    assert git.resolve(wt, "HEAD") == tip and _branches(pair.down.path) == ["main", doc["branch"]]
    (wt / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('downstream')\n")
    git.run(wt, ["add", "vime/a.py"])
    code, doc, err = sync_json(capsys, wt, "--continue")  # the sync goes on with the carry
    assert code == 1 and doc["stopped"] == "audit", (doc, err)
    assert (
        next(s for s in doc["steps"] if s["name"] == "carry")["figure"] == f"1 carried onto {doc['branch']}"
    )
    message = git.run(wt, ["log", "-1", "--format=%B", "HEAD"]).decode()
    assert "Upstream-PR: THUDM/slime#2" in message and "Carry-Resolved: vime/a.py" in message
    assert _carried_gate(capsys, wt) == "held"
    assert "vime/a.py" in doc["decision"]  # the hand-resolved file asks for its review
    assert not list(tmp_path.rglob("PWNED"))


def test_the_skipped_pr_carries_cleanly_once_the_maintainer_made_room(tmp_path: Path, capsys) -> None:
    pair, wt, doc = _skipped(tmp_path, capsys)
    mine = _commit_in(wt, "vime/a.py")  # the maintainer's own change, committed on the sync branch
    (wt / "vime/a.py").write_text("from vime import x\nprint(1)\n")
    git.run(wt, ["-c", "user.name=M", "-c", "user.email=m@x", "commit", "-qam", "make room for #2"])
    folder, command = printed(doc["next"])
    ran = shell(command, folder)
    assert ran.returncode == 0 and "carried #2" in ran.stdout, (ran.stdout, ran.stderr)
    assert (
        git.is_ancestor(wt, mine, "HEAD")
        and (wt / "vime/a.py").read_text() == "from vime import x\nprint(2)\n"
    )
    assert _carried_gate(capsys, wt) == "held"
    code, doc, err = sync_json(capsys, wt, "--continue")
    # past the carried gate: what stops it now is the pair's missing engine (patches not checked)
    assert code == 1 and doc["stopped"] == "status" and doc["decision"].startswith("patches:"), (doc, err)
    # Commits of the maintainer's are on the branch: --abort keeps it, and says how to remove it.
    code, done, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and done["branch"] is None and done["kept"] and wt.is_dir()


def test_carry_abort_of_the_skipped_pr_puts_the_sync_branch_back(tmp_path: Path, capsys) -> None:
    pair, wt, doc = _skipped(tmp_path, capsys)
    tip = git.resolve(wt, "HEAD")
    folder, command = printed(doc["next"])
    assert shell(command, folder).returncode == 1  # stopped at the conflict
    aborted = shell("vimesync carry --abort", wt)
    assert aborted.returncode == 0, aborted.stderr
    assert "back at" in aborted.stderr and "removed" not in aborted.stdout.replace("nothing removed", "")
    assert git.resolve(pair.down.path, doc["branch"]) == tip and wt.is_dir()
    assert git.run(wt, ["status", "--porcelain"]).decode() == ""
    code, again, _ = sync_json(capsys, wt, "--continue")  # the sync still stands, at the same stop
    assert code == 1 and again["next"] == doc["next"]


def test_carry_pr_into_a_sync_refuses_a_worktree_with_changes(tmp_path: Path, capsys) -> None:
    _, wt, doc = _skipped(tmp_path, capsys)
    (wt / "vime/util.py").write_text("edited\n")
    folder, command = printed(doc["next"])
    ran = shell(command, folder)
    assert ran.returncode == 2 and "has changes not committed" in ran.stderr
    assert (wt / "vime/util.py").read_text() == "edited\n"


def test_sync_abort_at_the_skipped_prs_conflict_puts_the_branch_back(tmp_path: Path, capsys) -> None:
    pair, wt, doc = _skipped(tmp_path, capsys)
    tip = git.resolve(wt, "HEAD")
    folder, command = printed(doc["next"])
    assert shell(command, folder).returncode == 1  # stopped at the conflict
    code, done, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and done["carry"]["branch"] is None  # the carry onto it removed nothing
    assert git.resolve(pair.down.path, doc["branch"]) == tip and wt.is_dir()
    assert git.run(wt, ["status", "--porcelain"]).decode() == ""
    # The sync's carry was ended by `carry --skip`, outside the sync: where it ended is not
    # recorded, so the branch is kept, and said how to remove it.
    assert done["kept"].endswith("the sync did not record where its carry ended") and done["remove"]
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()
