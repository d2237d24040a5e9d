"""One ``vimesync sync`` of the demo does each piece of work once (issue 30): the git processes it
starts are counted (a counter, not a timing), and so are its walks of the upstream range and its
listings of the engine pin's and the upstream tip's trees. Before, one sync started 227 git
processes, walked the range 4 times and listed each of those trees 3 times: the status step built
the report, the report step built it again, after the patches and audit steps did their own. Now
one walk: the head's steps take the walk step's when the head holds the same inputs, byte for
byte; else they walk again (the tests of a checkout policy that differs from the head's)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.builders.pair import cli
from tests.builders.syncdemo import OFFLINE, presync_demo, sync_json
from vimesync import git

pytestmark = pytest.mark.slow  # a real demo, carried and reported

# Half of the 227 one sync started before was the goal; it starts 92 since it walks once and
# the replay reads the sync's commits in one process: a few more (a ~/.gitconfig read) are allowed.
MAX_GIT = 98


@dataclass
class Spawned:
    """Every git process started, as (the folder it ran in, its arguments after git's options)."""

    runs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def full_listings(self, rev: str) -> int:
        """``git ls-tree -r`` of all of ``rev`` (no path limit)."""
        return sum(1 for _, a in self.runs if a[:2] == ("ls-tree", "-r") and a[-1] == rev)

    def diff_trees(self, *repos: Path) -> int:
        """``git diff-tree`` processes run in any of ``repos``."""
        here = {os.path.realpath(r) for r in repos}
        return sum(1 for cwd, a in self.runs if os.path.realpath(cwd) in here and a[0] == "diff-tree")

    def downstream_scans(self, *repos: Path) -> int:
        """Logs of the downstream's commits with their patches (the scan for mirrored PRs)."""
        here = {os.path.realpath(r) for r in repos}
        return sum(1 for cwd, a in self.runs if os.path.realpath(cwd) in here and a[0] == "log" and "-p" in a)

    def walks(self, upstream: Path) -> int:
        """Walks of the upstream range: the first-parent log with the files of each commit."""
        here = os.path.realpath(upstream)
        logs = [a for cwd, a in self.runs if os.path.realpath(cwd) == here and a[0] == "log"]
        return sum(1 for a in logs if "--name-only" in a and "--first-parent" in a)


def _command(argv: list[str]) -> tuple[str, ...]:
    """The arguments from git's subcommand on (vimesync puts ``-c key=value`` pairs before it)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-c", "-C") else 1
    return tuple(argv[i:])


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spawned]:
    """Counts the git processes started while the test runs (each still runs: nothing is faked)."""
    seen = Spawned()
    real = subprocess.Popen.__init__

    def counting(self: subprocess.Popen[bytes], args: object, *a: object, **kw: object) -> None:
        if isinstance(args, (list, tuple)) and args and os.path.basename(str(args[0])) == "git":
            seen.runs.append((str(kw.get("cwd") or os.getcwd()), _command([str(x) for x in args])))
        real(self, args, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", counting)
    yield seen


def test_one_sync_does_each_piece_of_work_once(tmp_path: Path, capsys, spawned: Spawned) -> None:
    d = presync_demo(tmp_path / "d")
    spawned.runs.clear()  # the demo's own build is not the sync's
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 0 and doc["ok"] is True, (doc, err)
    assert [s["name"] for s in doc["steps"]] == ["walk", "carry", "patches", "audit", "status", "report"]
    # one walk: the walk step's is the carry's, and the head's (the report, the status, the replay
    # of the carry) once the head holds the same config and policy bytes over the same range
    assert spawned.walks(d.upstream) == 1
    # the patch stack is applied to the engine pin's tree once, the audit lists the upstream tip once
    assert spawned.full_listings(d.engine_rev) == 1
    assert spawned.full_listings(d.tip) == 1
    assert len(spawned.runs) <= MAX_GIT, sorted(a[0] for _, a in spawned.runs)


def test_the_replay_reads_the_sync_commits_in_one_git_process(
    tmp_path: Path, capsys, spawned: Spawned
) -> None:
    """The replay of the carry (the conflicts resolved by hand) compares each commit of the sync
    with its parent: one ``git diff-tree --stdin`` for them all, not one process per commit (a
    real 37-commit sync started 37)."""
    d = presync_demo(tmp_path / "d")
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 0, (doc, err)
    commits = git.run(d.checkout, ["rev-list", "--count", f"main..sync/{d.tip[:8]}"]).decode().strip()
    assert int(commits) >= 2
    assert spawned.diff_trees(d.checkout, d.downstream) == 1


def test_a_checkout_policy_never_stands_in_for_the_heads(tmp_path: Path, capsys, spawned: Spawned) -> None:
    """The checkout's working tree excludes #2430 (an edit not committed): the walk step and the
    carry leave it out, but the head commit's policy makes it applicable. The head walks again
    with its own policy and finds #2430 not carried; taking the checkout's walk would have
    passed the gate on a file the head does not hold."""
    d = presync_demo(tmp_path / "d")
    policy = d.checkout / "sop" / "policy.toml"
    rule = '[[rule]]\naction = "exclude"\nreason = "not now"\nprs = [2430]\n\n'
    policy.write_text(rule + policy.read_text())
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert spawned.walks(d.upstream) == 2
    assert code == 1 and doc["stopped"] == "status", (doc, err)
    assert "#2430" in doc["decision"]


@pytest.mark.parametrize("name", ["sop/policy.toml", "vimesync.toml"])
def test_the_same_meaning_in_other_bytes_is_walked_again(
    tmp_path: Path, capsys, spawned: Spawned, name: str
) -> None:
    """A policy or config that means the same but is not the same bytes (a comment added in the
    checkout): the head walks again. Equal is byte-equal, never "parses the same"."""
    d = presync_demo(tmp_path / "d")
    file = d.checkout / name
    file.write_text(file.read_text() + "# a comment\n")
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 0, (doc, err)
    assert spawned.walks(d.upstream) == 2


PATCH = "patches/vllm-score-centering.patch"
CONTEXT = '        top_p=body.get("top_p", 1.0),\n'


def _commit(repo: Path, message: str) -> None:
    git.run(repo, ["-c", "user.name=M", "-c", "user.email=m@x", "commit", "-qam", message])


def _stopped_at_patches(tmp_path: Path, capsys) -> tuple[object, Path, str]:
    """The demo's sync stopped at its patches step (a drifted patch), then the patch fixed on the
    sync branch: the demo, the sync's worktree, and the good patch."""
    d = presync_demo(tmp_path / "d")
    good = (d.checkout / PATCH).read_text()
    (d.checkout / PATCH).write_text(good.replace(CONTEXT, CONTEXT.replace("1.0", "0.9")))
    _commit(d.checkout, "patches: a context line the pin does not have")
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 1 and doc["stopped"] == "patches", (doc, err)
    worktree = Path(doc["worktree"])
    (worktree / PATCH).write_text(good)
    _commit(worktree, "patches: refresh vllm-score-centering for the pin")
    return d, worktree, good


def test_a_later_run_takes_the_walk_the_walk_step_kept(tmp_path: Path, capsys, spawned: Spawned) -> None:
    """``--continue`` is another run (another process): its head steps took the walk step's walk
    only within that run, and walked the range again in each later one. The walk step keeps its
    walk beside the sync's state; the head of a later run takes it on the same proof."""
    d, _, _ = _stopped_at_patches(tmp_path, capsys)
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and doc["stopped"] == "audit", (doc, err)  # the audit read the walk
    assert spawned.walks(d.upstream) == 0


@pytest.mark.parametrize(
    "kept",
    [
        b"not json",
        b'{"inputs": "0", "result": {}}',
        b"[" * 10_000,
    ],
    ids=["garbage", "wrong-shape", "deep"],
)
def test_a_kept_walk_that_cannot_be_read_is_walked_again(
    tmp_path: Path, capsys, spawned: Spawned, kept: bytes
) -> None:
    d, _, _ = _stopped_at_patches(tmp_path, capsys)
    (git.common_dir(d.checkout) / "vimesync-sync-walk.json").write_bytes(kept)
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and doc["stopped"] == "audit", (doc, err)
    assert spawned.walks(d.upstream) == 1


def test_a_kept_walk_is_not_taken_once_the_head_holds_another_policy(
    tmp_path: Path, capsys, spawned: Spawned
) -> None:
    """The sync branch commits an exclusion after the walk step: the kept walk rests on the old
    policy's bytes, so the head walks again and sees #2430 excluded."""
    d, worktree, _ = _stopped_at_patches(tmp_path, capsys)
    policy = worktree / "sop" / "policy.toml"
    rule = '[[rule]]\naction = "exclude"\nreason = "not now"\nprs = [2430]\n\n'
    policy.write_text(rule + policy.read_text())
    _commit(worktree, "policy: leave #2430 out")
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert spawned.walks(d.upstream) == 1, (doc, err)


def test_a_kept_walk_of_other_inputs_or_behind_a_symlink_is_walked_again(
    tmp_path: Path, capsys, spawned: Spawned
) -> None:
    """A kept walk whose digest is not the head's (edited, or another sync's) is not taken; nor
    one that is a symbolic link (it is never followed)."""
    d, _, _ = _stopped_at_patches(tmp_path, capsys)
    kept = git.common_dir(d.checkout) / "vimesync-sync-walk.json"
    doc = json.loads(kept.read_text())
    doc["inputs"] = "0" * 64
    elsewhere = tmp_path / "walk.json"
    elsewhere.write_text(kept.read_text())  # the true one, behind a link
    kept.write_text(json.dumps(doc))
    spawned.runs.clear()
    code, out, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and out["stopped"] == "audit", (out, err)
    assert spawned.walks(d.upstream) == 1
    kept.unlink()
    kept.symlink_to(elsewhere)
    spawned.runs.clear()
    code, out, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and out["stopped"] == "audit", (out, err)
    assert spawned.walks(d.upstream) == 1


def _stopped_at_audit(tmp_path: Path, capsys) -> tuple[object, Path]:
    """The demo's sync stopped at its audit (the refreshed patch to review), the review then
    recorded in the ledger as the stop says (not committed: the head does not move)."""
    d, worktree, _ = _stopped_at_patches(tmp_path, capsys)
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and doc["stopped"] == "audit", (doc, err)
    review = doc["next"].split(": ", 1)[1].split(", then ")[0].replace("NAME", "maintainer").split()
    code, _, err = cli(capsys, *review[1:], cwd=worktree)
    assert code == 0, err
    return d, worktree


def test_continue_at_the_same_head_takes_what_the_last_run_worked_out(
    tmp_path: Path, capsys, spawned: Spawned
) -> None:
    """The audit stopped; the review is recorded; ``--continue`` runs the audit, status and report
    at the head the last run judged. What that run worked out of the head (which PRs it carries,
    the replay of the carry) is kept beside the state and taken: no replay and no scan of the
    sync's commits again. Before, the --continue replayed the carry (one ``diff-tree --stdin``)
    and scanned the downstream for mirrored PRs once more."""
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (doc, err)
    assert spawned.walks(d.upstream) == 0
    assert spawned.diff_trees(d.checkout, worktree) == 0  # the replay's
    assert spawned.downstream_scans(d.checkout, worktree) == 0


def test_a_kept_head_is_not_taken_at_another_head(tmp_path: Path, capsys, spawned: Spawned) -> None:
    """The review committed: the head moved, so its facts are worked out at the new head."""
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    git.run(worktree, ["add", "-A"])
    _commit(worktree, "review")
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (doc, err)
    assert spawned.diff_trees(d.checkout, worktree) == 1


def test_a_note_of_the_sync_is_said_once(tmp_path: Path, capsys) -> None:
    """The review committed moves the head: the note that says so is one line, not two."""
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    git.run(worktree, ["add", "-A"])
    _commit(worktree, "review")
    code, out, err = cli(capsys, "sync", "--continue", *OFFLINE, cwd=d.checkout)
    assert code == 0, (out, err)
    assert err.count("since it ran, so it ran again") == 1, err


@pytest.mark.parametrize("kept", [b"{}", b"not json", b'{"key": "' + b"0" * 64 + b'", "carried": [1]}'])
def test_a_kept_head_that_cannot_be_read_or_is_another_is_worked_out_again(
    tmp_path: Path, capsys, spawned: Spawned, kept: bytes
) -> None:
    """Edited, truncated or another head's: the head's facts are worked out again, never an error
    and never a forged carried list taken (the key is the digest of what they rest on)."""
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    (git.common_dir(d.checkout) / "vimesync-sync-head.json").write_bytes(kept)
    spawned.runs.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (doc, err)
    assert spawned.diff_trees(d.checkout, worktree) == 1


def test_abort_removes_what_the_sync_kept(tmp_path: Path, capsys) -> None:
    d, _ = _stopped_at_audit(tmp_path, capsys)
    kept = [git.common_dir(d.checkout) / f"vimesync-sync-{n}.json" for n in ("walk", "head", "check")]
    assert all(k.is_file() for k in kept)
    code, _, err = sync_json(capsys, d.checkout, "--abort")
    assert code == 0, err
    assert not any(k.exists() for k in kept)


# -- the patch check kept for a later run of the sync (app/synccheck.py) ------------------------


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the checks of a patch stack run (each still runs: nothing is faked). The engine's
    tree listing is no measure: the check's cache keeps it across runs."""
    from vimesync.check import run

    ran: list[int] = []
    real = run.run_check

    def counting(*a: object, **kw: object) -> object:
        ran.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "run_check", counting)
    return ran


def test_a_later_run_takes_the_check_of_the_same_stack(tmp_path: Path, capsys, checks: list[int]) -> None:
    """The audit stopped and the review is recorded: ``--continue`` judges a head whose stack,
    pins and config are the bytes the last run checked. Before, its status and report checked
    the stack again (the engine pin's tree listed once more); now they take the kept check.
    Committed, the review moves the head; the stack is the same, the check is still taken."""
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    git.run(worktree, ["add", "-A"])
    _commit(worktree, "review")
    checks.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (doc, err)
    assert checks == []
    assert doc["steps"][2] == {**doc["steps"][2], "figure": "4 apply, 14 files parse", "reused": False}


def test_a_changed_patch_is_checked_again(tmp_path: Path, capsys, checks: list[int]) -> None:
    """The fix of a failing patch is a commit of the stack: the kept check (of the failing
    patch) is not the head's, so the stack is checked again and holds."""
    d, worktree, _ = _stopped_at_patches(tmp_path, capsys)
    checks.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert doc["stopped"] == "audit", (doc, err)
    assert checks == [1]
    assert doc["steps"][2]["figure"] == "4 apply, 14 files parse"


@pytest.mark.parametrize("how", ["garbage", "another-stack"])
def test_a_kept_check_that_cannot_be_read_or_is_anothers_is_checked_again(
    tmp_path: Path, capsys, checks: list[int], how: str
) -> None:
    d, worktree = _stopped_at_audit(tmp_path, capsys)
    kept = git.common_dir(d.checkout) / "vimesync-sync-check.json"
    if how == "garbage":
        kept.write_bytes(b'{"checks": [{"key": 1}]}')
    else:  # a forged report under a key of other bytes: never taken
        doc = json.loads(kept.read_text())
        doc["checks"][0]["key"] = "f" * 64
        kept.write_text(json.dumps(doc))
    checks.clear()
    code, out, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (out, err)
    assert checks == [1]


def test_a_check_taken_then_a_patch_changed_is_checked_again(
    tmp_path: Path, capsys, checks: list[int]
) -> None:
    """A run that took the kept check never asked the stack's paths itself: what it keeps again
    is the check as it was kept, so a patch committed after it is still seen."""
    d = presync_demo(tmp_path / "d")
    good = (d.checkout / PATCH).read_text()
    (d.checkout / PATCH).write_text(good.replace(CONTEXT, CONTEXT.replace("1.0", "0.9")))
    _commit(d.checkout, "patches: a context line the pin does not have")
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 1 and doc["stopped"] == "patches", (doc, err)
    checks.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)  # nothing changed
    assert doc["stopped"] == "patches" and checks == [], (doc, err)
    worktree = Path(doc["worktree"])
    (worktree / PATCH).write_text(good)
    _commit(worktree, "patches: refresh vllm-score-centering for the pin")
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert doc["stopped"] == "audit", (doc, err)
    assert checks == [1]


def test_what_another_vimesync_kept_is_worked_out_again(
    tmp_path: Path, capsys, spawned: Spawned, checks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """vimesync upgraded (or a development install edited) between ``sync`` and ``--continue``:
    the walk and the check the last run kept are another build's facts, so the head walks and
    checks again."""
    from vimesync import codestamp

    d, worktree = _stopped_at_audit(tmp_path, capsys)
    git.run(worktree, ["add", "-A"])
    _commit(worktree, "review")
    codestamp.code_stamp.cache_clear()
    monkeypatch.setattr(codestamp, "__version__", "99.0")
    spawned.runs.clear()
    checks.clear()
    code, doc, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    codestamp.code_stamp.cache_clear()
    assert code == 0, (doc, err)
    assert spawned.walks(d.upstream) == 1 and checks == [1]
