"""``vimesync carry --continue | --skip | --abort | --status``: a carry that stopped (at a
conflict, or because its process was killed) picks up from the state in the git directory."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from vimesync.carry import gitops
from vimesync.carry import state as state_mod
from vimesync.carry.finish import finish, identity_env, record
from vimesync.carry.model import (
    EMPTY,
    EMPTY_RESOLVED,
    SKIPPED,
    Aborted,
    Carried,
    CarryJob,
    CarryPhase,
    CarryRun,
    SkippedItem,
)
from vimesync.carry.run import run
from vimesync.carry.state import State
from vimesync.errors import BadInput, VimesyncError
from vimesync.statefile import plain_location
from vimesync.upstream.translate import Transform, transform_from_doc


class Unresolved(VimesyncError):
    """--continue while files are still in conflict: a failed check (exit 1), not bad input."""

    exit_code = 1


def _reconcile(downstream: Path, state: State) -> None:
    """Bring the state up to the branch: a process killed after moving the branch and before
    writing the state left one more carried commit (or the pin bump) on the branch."""
    ref = f"refs/heads/{state.branch}"
    at = gitops.branch_at(downstream, ref)
    if at is None:
        raise BadInput(
            f"the sync branch {state.branch} is gone", hint="vimesync carry --abort clears the carry's state"
        )
    if at == state.last:
        return
    found = gitops.upstream_commits_of(downstream, state.last, at)
    for sha, upstream_commit in found:
        if state.phase is CarryPhase.ITEMS and not state.squash and state.next < len(state.items):
            # Items between two landed commits made no commit: they were empty after the merge.
            ahead = [i.upstream_commit for i in state.items[state.next :]]
            if upstream_commit in ahead:
                for item in state.items[state.next : state.next + ahead.index(upstream_commit)]:
                    state.skipped.append(SkippedItem.of(item, EMPTY))
                state.next += ahead.index(upstream_commit)
                item = state.items[state.next]
                state.carried.append(Carried(item.pr, item.title, item.upstream_commit, (), sha))
                state.last = sha
                state.next += 1
                continue
        if state.phase is CarryPhase.PIN and upstream_commit is None and sha == at:
            state.last = sha  # the pin bump landed
            state.phase = CarryPhase.DONE
            continue
        last_carried = state.carried[-1].upstream_commit if state.carried else None
        squashed = state.phase is CarryPhase.ITEMS and state.squash and sha == at
        if squashed and upstream_commit == last_carried:
            state.last = sha  # the squash commit landed
            state.phase = CarryPhase.PIN
            continue
        raise BadInput(
            f"the sync branch {state.branch} moved to {at[:12]}, which this carry did not make",
            hint="vimesync carry --abort removes the branch and the worktree",
        )
    state_mod.save(downstream, state)


def _started_with(downstream: Path, state: State, transform: Transform) -> Transform:
    """The map and translations the carry started with (``transform``: a state from before they
    were kept)."""
    if state.transform is None:
        return transform
    return transform_from_doc(state.transform, where=str(state_mod.state_path(downstream)))


def resume(
    downstream: Path,
    transform: Transform,
    job: CarryJob,
) -> CarryRun:
    """--continue: commit the resolved conflict (or find where a killed carry stopped) and go on."""
    state = state_mod.load(downstream)
    transform = _started_with(downstream, state, transform)
    _reconcile(downstream, state)
    if state.conflict is not None:
        wt = Path(state.worktree)
        left = gitops.unmerged(wt)
        if left:
            raise Unresolved(
                f"{len(left)} file(s) still in conflict: {', '.join(left[:10])}",
                hint=f"resolve them in {wt}, git add them, then vimesync carry --continue",
            )
        dirty = gitops.unstaged(wt)
        if dirty:
            raise Unresolved(
                f"{len(dirty)} file(s) changed but not added: {', '.join(dirty[:10])}",
                hint=f"git add them in {wt} (or git checkout them), then vimesync carry --continue",
            )
        tree = gitops.write_tree(wt)
        item = state.items[state.next]
        current = state.pre_conflict_tree or gitops.tree_of(downstream, state.last)
        if tree == current:
            state.skipped.append(SkippedItem.of(item, EMPTY_RESOLVED))
        else:
            record(
                downstream,
                state,
                f"refs/heads/{state.branch}",
                item,
                tree,
                [],
                None,
                identity_env(job.identity),
            )
        state.worktree_tree = tree
        state.conflict = None
        state.pre_conflict_tree = None
        state.next += 1
        state_mod.save(downstream, state)
    if state.phase is not CarryPhase.ITEMS:
        return finish(downstream, state, identity=job.identity)
    return run(downstream, state, transform, job)


def skip(
    downstream: Path,
    transform: Transform,
    job: CarryJob,
) -> CarryRun:
    """--skip: drop the conflicting item (recorded as not carried) and go on."""
    state = state_mod.load(downstream)
    transform = _started_with(downstream, state, transform)
    _reconcile(downstream, state)
    if state.conflict is None:
        raise BadInput(
            "the carry is not stopped at a conflict: nothing to skip", hint="vimesync carry --continue"
        )
    item = state.items[state.next]
    before = state.pre_conflict_tree or gitops.tree_of(downstream, state.last)
    gitops.reset_to(Path(state.worktree), before)
    state.worktree_tree = before
    state.skipped.append(SkippedItem.of(item, SKIPPED))
    state.conflict = None
    state.pre_conflict_tree = None
    state.next += 1
    state_mod.save(downstream, state)
    return run(downstream, state, transform, job)


def abort(downstream: Path) -> Aborted:
    """--abort: remove the worktree, the branch and the state; the repository is as before.

    ``downstream`` may be the carry's own worktree (the conflict message sends the user there):
    git runs from the main repository, which removing the worktree leaves in place."""
    downstream = gitops.main_repository(downstream)
    path = state_mod.state_path(downstream)
    branch: str | None
    worktree: str | None
    if not state_mod.exists(downstream):
        state_mod.load(downstream)  # BadInput: no carry is in progress
    try:
        state = state_mod.load(downstream)
        branch, worktree = state.branch, state.worktree
    except VimesyncError:  # not ours to read (its shape, its size, a symlink): what can be salvaged
        branch, worktree = _salvage(path)
    if branch is not None and not state_mod.valid_branch(downstream, branch):
        branch = None
    if worktree is not None and not plain_location(worktree):  # as a readable state is held to
        worktree = None
    ref = f"refs/heads/{branch}" if branch else None
    # Only what the carry made: its worktree is the one with its branch checked out (or one git no
    # longer lists); its branch is not checked out in any other worktree. Anything else the state
    # names (a state edited by hand or corrupted) is left alone, never force-removed.
    listed = gitops.worktrees(downstream)
    notes = []
    if worktree:
        wt = Path(os.path.abspath(worktree))
        if wt in listed and (ref is None or listed[wt] != ref):
            notes.append(f"left the worktree {wt} alone: it is not on the carry's branch")
            worktree = None
        else:
            gitops.remove_worktree(downstream, wt)
    if ref is not None and gitops.ref_exists(downstream, ref):
        users = [p for p, r in gitops.worktrees(downstream).items() if r == ref]
        if users:
            notes.append(f"left the branch {branch} alone: it is checked out in {users[0]}")
            branch = None
        else:
            gitops.delete_branch(downstream, ref)
    state_mod.remove(downstream)
    return Aborted(branch, worktree, tuple(notes))


_HEAD = 1 << 16  # bytes of a state read to salvage its branch and worktree
_LEADING = re.compile(r'\{\s*"branch":\s*("(?:[^"\\]|\\.)*")\s*,\s*"worktree":\s*("(?:[^"\\]|\\.)*")')


def _salvage(path: Path) -> tuple[str | None, str | None]:
    """Branch and worktree of a state file we cannot fully read (best effort, never raises):
    the whole document when it is small enough, else the two fields vimesync writes first. The
    caller still removes them only when they are the carry's (see :func:`abort`)."""
    text, doc = "", None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None, None
            data = f.read(state_mod.MAX_STATE + 1)
        text = data.decode("utf-8", "replace")
        if len(data) <= state_mod.MAX_STATE:
            doc = json.loads(text)
    except (OSError, ValueError):
        pass
    if not isinstance(doc, dict):
        m = _LEADING.match(text[:_HEAD])
        if m is None:
            return None, None
        try:
            doc = {"branch": json.loads(m.group(1)), "worktree": json.loads(m.group(2))}
        except ValueError:
            return None, None
    branch = doc.get("branch") if isinstance(doc.get("branch"), str) else None
    worktree = doc.get("worktree") if isinstance(doc.get("worktree"), str) else None
    return branch, worktree


def status(downstream: Path) -> State | None:
    """The carry in progress (None: there is none); the use case says where it stands."""
    if not state_mod.exists(downstream):
        return None
    return state_mod.load(downstream)
