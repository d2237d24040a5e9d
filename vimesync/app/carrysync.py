"""``vimesync carry --pr N`` in a sync whose carry has ended: the PR (one the carry left out at a
conflict, ``--skip``) is carried onto the sync's own branch, in its worktree, as the walk of the
sync's range classifies it at the branch's tip (issue 29, item 18). Without this, the range
read at the sync branch is empty (its pin says the tip) and a second carry would need a new
branch the sync does not judge.

The sync state names the branch; git must agree that it is checked out in exactly one worktree,
and that worktree must hold no uncommitted change. ``--abort`` of such a carry puts the branch
back where it was (:func:`put_back`), never deletes them as the abort of a new carry does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vimesync import git
from vimesync.app import syncstate
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.workspace import Workspace
from vimesync.carry.model import Aborted, CarryJob, CarryRun, CarryStatus
from vimesync.carry.run import CarryOptions
from vimesync.errors import BadInput


def sync_branch(repo: Path) -> tuple[Path, str, Path] | None:
    """The checkout, the branch and the worktree of the sync in progress whose carry ended (None:
    there is none)."""
    from vimesync.carry import gitops

    checkout = gitops.main_repository(repo)
    if not syncstate.exists(checkout):
        return None
    s = syncstate.load(checkout)
    done = s.done("carry")
    if s.branch is None or done is None or not done.ok:
        return None
    ref = f"refs/heads/{s.branch}"
    users = [p for p, r in gitops.worktrees(checkout).items() if r == ref]
    if len(users) != 1:
        return None
    return checkout, s.branch, users[0]


def carry_into_sync(
    ws: Workspace, options: CarryOptions, job: CarryJob, progress: Progress = no_progress
) -> CarryRun | None:
    """``--pr N`` (and no other flag of a new carry) carried onto the sync's branch; None when no
    sync whose carry ended is here, or other flags say another carry. ``progress``: told its
    walk and how many items are carried, as a carry's."""
    from vimesync.app import upstreamsteps
    from vimesync.carry import run as carry_run
    from vimesync.upstream.policy import load_policy
    from vimesync.upstream.translate import load_transform

    if not options.prs or options.given() != ["--pr"] or ws.flags.range_ is not None:
        return None
    found = sync_branch(ws.require_downstream())
    if found is None:
        return None
    checkout, branch, worktree = found
    if git.run(worktree, ["status", "--porcelain", "-z"], check=False).strip(b"\0"):
        raise BadInput(
            f"the sync's worktree {worktree} has changes not committed",
            hint="commit or stash them, then the same command",
        )
    s = syncstate.load(checkout)
    tip = git.resolve(checkout, f"refs/heads/{branch}")
    # The sync's range and upstream, read as the checkout holds them (as the sync's own carry did).
    upstream = Path(s.upstream) if s.upstream else ws.flags.upstream
    flags = replace(ws.flags, range_=s.range, upstream=upstream, config=_config_at(ws, worktree, checkout))
    here = replace(ws, flags=flags).elsewhere(checkout)
    step = Phases(progress, "carry", 2)
    with here:
        with step("walking the upstream range"):
            at_onto = upstreamsteps.walk(here, at=s.onto)
            ranged = replace(here, flags=replace(here.flags, range_=f"{at_onto.base}..{at_onto.tip}"))
            walked = upstreamsteps.walk(ranged, at=tip)
        if here.upstream is None:
            raise BadInput("no upstream repository given", hint="pass --upstream PATH or set [upstream] path")
        policy = load_policy(here.policy, here.reader) if here.policy else None
        transform = load_transform(here.config)
        options = replace(options, branch=branch, onto=tip, worktree=worktree)
        with step(f"carrying onto {branch}") as update:
            result = carry_run.extend(
                checkout,
                here.config,
                transform,
                options,
                walked,
                policy,
                upstream=here.upstream,
                job=replace(job, progress=update),
            )
    carried_to(checkout, branch, tip, result)
    return result


def _config_at(ws: Workspace, worktree: Path, checkout: Path) -> Path | None:
    """The config the checkout holds, when the one found is the sync worktree's (whose pin the
    sync's carry moved to the tip): at the same place in the checkout."""
    file = ws.checkout.file
    if file is None:
        return ws.flags.config
    try:
        rel = Path(file).absolute().relative_to(worktree)
    except ValueError:
        return ws.flags.config
    return checkout / rel if (checkout / rel).is_file() else ws.flags.config


def carried_to(checkout: Path, branch: str, onto: str, result: CarryRun) -> None:
    """The sync's record of where its carry ended moves with a carry onto its branch that ended,
    when that carry started where the record was (no commit of a maintainer's in between): its
    --abort then removes the branch only while nothing else is on it."""
    from vimesync.carry import gitops

    if result.status is not CarryStatus.DONE or not syncstate.exists(checkout):
        return
    s = syncstate.load(checkout)
    if s.branch == branch and s.carried == onto:
        s.carried = gitops.branch_at(checkout, f"refs/heads/{branch}")
        syncstate.save(checkout, s)


def onto_sync(repo: Path) -> tuple[Path, str, str] | None:
    """The carry in progress here when it is one onto the branch of a sync whose carry ended (the
    checkout, the branch, where it started); None for any other carry."""
    from vimesync.carry import gitops
    from vimesync.carry import state as carry_state

    checkout = gitops.main_repository(repo)
    found = sync_branch(checkout)
    if found is None or not carry_state.exists(checkout):
        return None
    state = carry_state.load(checkout)
    return (checkout, state.branch, state.onto) if state.branch == found[1] else None


def put_back(repo: Path) -> Aborted | None:
    """--abort of a carry onto a sync's branch: the branch back where that carry started, its
    worktree reset to it, the carry's state removed; None when the carry is another one."""
    from vimesync.carry import gitops
    from vimesync.carry import state as carry_state

    found = onto_sync(repo)
    if found is None:
        return None
    checkout, branch, onto = found
    ref = f"refs/heads/{branch}"
    at = gitops.branch_at(checkout, ref)
    if at is not None and at != onto:
        gitops.move_branch(checkout, ref, onto, at)
    where = f"the branch {branch}"
    users = [p for p, r in gitops.worktrees(checkout).items() if r == ref]
    if len(users) == 1:
        gitops.reset_to(users[0], gitops.tree_of(checkout, onto))
        where += f" and its worktree {users[0]}"
    carry_state.remove(checkout)
    return Aborted(
        None, None, (f"{where} are back at {onto[:12]}, where this carry started; the sync goes on",)
    )
