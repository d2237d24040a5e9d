"""``vimesync sync --abort``: the sync's state removed, with what the sync made: the carry in
progress aborted (carry's own ``--abort``), or the finished carry's branch and worktree removed
while nothing was committed on the branch since and the worktree holds no change; else kept, and
the commands that remove them said (never a maintainer's commit or uncommitted review lost).
Also the advice of a sync refused by a branch in its way (git refuses to delete a branch checked
out in a worktree: the worktree goes first)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vimesync.app import syncstate
from vimesync.app.carry import AbortResult, CarryMode, CarryRequest, carry
from vimesync.app.syncresult import SyncAbortResult
from vimesync.app.syncstate import SyncState
from vimesync.app.syncsteps import CONTINUE, in_dir, sh
from vimesync.app.workspace import Workspace


def abort(ws: Workspace, checkout: Path) -> SyncAbortResult:
    from vimesync.carry import state as carry_state
    from vimesync.errors import VimesyncError

    if not syncstate.exists(checkout):
        syncstate.load(checkout)  # BadInput: no sync is in progress
    try:
        state: SyncState | None = syncstate.load(checkout)
    except VimesyncError:  # not ours to read: its state is removed, nothing it names is touched
        state = None
    carried: AbortResult | None = None
    if carry_state.exists(checkout):
        result = carry(ws.elsewhere(checkout), CarryRequest(CarryMode.ABORT))
        assert isinstance(result, AbortResult)
        carried = result
        done = state.done("carry") if state is not None else None
        if done is None or not done.ok:  # the sync's own carry: its abort removed what it made
            syncstate.remove(checkout)
            return SyncAbortResult(True, carried)
        # a carry onto the branch after the sync's own ended: put back, then as below
    made = _remove_made(checkout, state) if state is not None else SyncAbortResult(True)
    made = replace(made, carry=carried)
    syncstate.remove(checkout)
    return made


def _remove_made(checkout: Path, state: SyncState) -> SyncAbortResult:
    """What the sync's finished carry made: its worktree and branch, removed while the branch is
    where the carry left it and the worktree holds no change; else kept, and said how to remove
    them (a maintainer's commit or uncommitted review is never lost)."""
    from vimesync import git
    from vimesync.carry import gitops

    if state.branch is None or not state.carry_started:
        return SyncAbortResult(True)
    ref = f"refs/heads/{state.branch}"
    tip = gitops.branch_at(checkout, ref)
    if tip is None:
        return SyncAbortResult(True)
    users = [p for p, r in gitops.worktrees(checkout).items() if r == ref]
    wt = users[0] if len(users) == 1 else None
    why = None
    if state.carried is None:
        why = "the sync did not record where its carry ended"
    elif tip != state.carried:
        count = git.run(checkout, ["rev-list", "--count", f"{state.carried}..{tip}"], check=False)
        n = count.decode().strip() or "some"
        why = f"it has {n} commit(s) beyond the sync's own"
    elif len(users) > 1 or (wt is not None and str(wt) != state.worktree):
        why = "it is checked out in a worktree the sync did not make"
    elif wt is not None and git.run(wt, ["status", "--porcelain", "-z"], check=False).strip(b"\0"):
        why = f"its worktree {wt} has changes not committed"
    if why is None:
        if wt is not None:
            gitops.remove_worktree(checkout, wt)
        gitops.delete_branch(checkout, ref, tip)
        return SyncAbortResult(True, branch=state.branch, worktree=str(wt) if wt else None)
    kept = f"kept the branch {state.branch}" + (f" and its worktree {wt}" if wt else "") + f": {why}"
    return SyncAbortResult(True, kept=kept, remove=f"{in_dir(checkout)} {remove_command(state.branch, wt)}")


def remove_command(branch: str, worktree: Path | None) -> str:
    """The commands that remove a sync branch (checked out in ``worktree``), as a shell takes them."""
    drop = sh("git", "branch", "-D", branch)
    return f"{sh('git', 'worktree', 'remove', str(worktree))} && {drop}" if worktree else drop


def refusal_hint(checkout: Path, branch: str) -> str:
    """What removes a branch in the way of a new sync (its worktree first), as the shell takes
    it; or another name for the sync's branch."""
    from vimesync.carry import gitops

    ref = f"refs/heads/{branch}"
    users = [p for p, r in gitops.worktrees(checkout).items() if r == ref]
    if users and users[0] == checkout:
        drop = f"{in_dir(checkout)} switch to another branch, then {remove_command(branch, None)}"
    else:
        drop = f"{in_dir(checkout)} {remove_command(branch, users[0] if users else None)}"
    return (
        f"{drop}, then {CONTINUE} (if nothing on it is needed);"
        " or vimesync sync --abort, then start again with --branch NAME"
    )
