"""How a carry pauses and ends: who commits, one resolved item committed (``--continue``), the
worktree left in git's conflict state, and the finish (the squash commit, the pin bump, the
worktree at the branch tip, the state removed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vimesync import git
from vimesync.carry import gitops
from vimesync.carry import plan as plan_mod
from vimesync.carry import state as state_mod
from vimesync.carry.blobs import blob_writer
from vimesync.carry.engine import Engine
from vimesync.carry.merge import Change
from vimesync.carry.model import Carried, CarryConflict, CarryPhase, CarryRun, CarryStatus, Item
from vimesync.carry.pin import bump_synced
from vimesync.carry.plan import Meta, message_for, read_meta
from vimesync.carry.state import State

# Who commits when nothing else says (no GIT_COMMITTER_* and no user.name anywhere).
IDENTITY = {
    "GIT_AUTHOR_NAME": "vimesync",
    "GIT_AUTHOR_EMAIL": "vimesync@localhost",
    "GIT_COMMITTER_NAME": "vimesync",
    "GIT_COMMITTER_EMAIL": "vimesync@localhost",
}


def current_tree(downstream: Path, state: State) -> str:
    """The tree the next item merges into: the squash tree so far, else the branch's."""
    return state.squash_tree or gitops.tree_of(downstream, state.last)


def identity_env(identity: dict[str, str] | None) -> dict[str, str]:
    """The GIT_AUTHOR_*/GIT_COMMITTER_* environment of the commits a carry makes."""
    env = dict(IDENTITY)
    env.update(identity or {})
    # Commits of our own (the pin bump, --squash) are authored by the committer unless told otherwise.
    for part in ("NAME", "EMAIL", "DATE"):
        if f"GIT_AUTHOR_{part}" not in (identity or {}) and f"GIT_COMMITTER_{part}" in env:
            env[f"GIT_AUTHOR_{part}"] = env[f"GIT_COMMITTER_{part}"]
    return env


def record(
    downstream: Path,
    state: State,
    ref: str,
    item: Item,
    tree: str,
    paths: list[str],
    engine: Engine | None,
    who: dict[str, str],
) -> None:
    """Commit one carried item (or, with --squash, keep its tree for the one commit at the end)."""
    entry = Carried(item.pr, item.title, item.upstream_commit, tuple(paths), None)
    if state.squash:
        state.squash_tree = tree
        state.carried.append(entry)
        return
    metas = [engine.meta(s) if engine else _meta(state, s) for s in item.steps]
    # Committed at --continue, the conflict still recorded: its files were resolved by hand.
    resolved = [f.path for f in state.conflict.files] if state.conflict else []
    message = message_for(item, metas, state.upstream_repo, item.excluded, resolved)
    commit = gitops.commit_tree(
        downstream, tree, [state.last], message, {**who, **plan_mod.author_env(metas[-1])}
    )
    gitops.move_branch(downstream, ref, commit, state.last)
    state.last = commit
    state.carried.append(replace(entry, commit=commit))


def _meta(state: State, sha: str) -> Meta:
    with git.CatFile(Path(state.upstream)) as cat:
        return read_meta(cat, sha)


def stop_at_conflict(downstream: Path, state: State, engine: Engine, change: Change, item: Item) -> None:
    """Leave the worktree in git's conflict state for ``item`` and record it."""
    current = current_tree(downstream, state)
    engine.blobs.flush(blob_writer(downstream, engine.scratch))  # the clean part and every stage
    index = gitops.Index(downstream, engine.scratch, current)
    index.update(change.updates)
    clean = index.write_tree()
    wt = Path(state.worktree)
    if state.worktree_tree is None:
        gitops.open_worktree(downstream, wt, state.branch)
        shown = gitops.tree_of(downstream, state.last)
    else:
        shown = state.worktree_tree
    gitops.two_way(wt, shown, current)
    gitops.two_way(wt, current, clean)
    gitops.stage_conflicts(wt, change.conflicts)
    state.worktree_tree = clean
    state.pre_conflict_tree = current
    state.conflict = CarryConflict.of(item, change.conflicts)
    state_mod.save(downstream, state)


def finish(downstream: Path, state: State, *, identity: dict[str, str] | None = None) -> CarryRun:
    """The squash commit, the pin bump, the worktree at the branch tip; the state removed."""
    who = identity_env(identity)
    ref = f"refs/heads/{state.branch}"
    if state.phase is CarryPhase.ITEMS:
        if state.squash and state.squash_tree and state.squash_tree != gitops.tree_of(downstream, state.onto):
            message = _squash_message(state)
            commit = gitops.commit_tree(downstream, state.squash_tree, [state.onto], message, who)
            gitops.move_branch(downstream, ref, commit, state.last)
            state.last = commit
            state.carried[:] = [replace(c, commit=commit) for c in state.carried]
        state.phase = CarryPhase.PIN
        state_mod.save(downstream, state)
    pin_commit = None
    if state.phase is CarryPhase.PIN:
        if state.pin:
            pin_commit = bump_synced(downstream, state, ref, who)
        state.phase = CarryPhase.DONE
        state_mod.save(downstream, state)
    wt = Path(state.worktree)
    if state.worktree_tree is None:
        gitops.open_worktree(downstream, wt, state.branch)
    else:
        gitops.two_way(wt, state.worktree_tree, gitops.tree_of(downstream, state.last))
    state.worktree_tree = gitops.tree_of(downstream, state.last)
    result = state.result(CarryStatus.DONE)
    result.pin_commit = pin_commit
    state_mod.remove(downstream)
    return result


def _squash_message(state: State) -> str:
    subject = f"Carry {len(state.carried)} upstream change(s) through {state.tip[:8]}"
    lines = [f"- {plan_mod.one_line(c.title)}" for c in state.carried]
    trailers = []
    for c in state.carried:
        item = next(i for i in state.items if i.upstream_commit == c.upstream_commit)
        trailers += plan_mod.trailers(item, state.upstream_repo)
    return f"{subject}\n\n" + "\n".join(lines) + "\n\n" + "\n".join(trailers) + "\n"
