"""``vimesync carry``: start, continue, skip, abort and report on a carry.

A carry creates the sync branch (``sync/<tip8>``, from ``--onto``) and commits one item after the
other through a temporary index (no checkout per PR); the branch moves forward after each commit.
The linked worktree is made when the carry stops at a conflict (in git's own conflict state) or
when it ends. The user's checkout, index and branch are never touched; nothing is pushed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.carry import gitops
from vimesync.carry import plan as plan_mod
from vimesync.carry import state as state_mod
from vimesync.carry.blobs import Blobs, blob_writer
from vimesync.carry.changes import Raw, upstream_change, upstream_changes
from vimesync.carry.fastimport import FastImport, ident, raw_date
from vimesync.carry.memtree import Entry, Tree
from vimesync.carry.merge import Change, Conflict, Merger
from vimesync.carry.pin import bump_synced
from vimesync.carry.plan import Item, Meta, build_plan, message_for, read_meta
from vimesync.carry.state import State
from vimesync.carry.transform import Transform, transform_doc
from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.safefs import scratch_dir

# Who commits when nothing else says (no GIT_COMMITTER_* and no user.name anywhere).
IDENTITY = {
    "GIT_AUTHOR_NAME": "vimesync",
    "GIT_AUTHOR_EMAIL": "vimesync@localhost",
    "GIT_COMMITTER_NAME": "vimesync",
    "GIT_COMMITTER_EMAIL": "vimesync@localhost",
}
EMPTY = "already in the downstream (empty after the merge)"
EMPTY_RESOLVED = "empty after the conflict was resolved"
SKIPPED = "skipped at a conflict (--skip)"


@dataclass(frozen=True)
class Options:
    range_: str | None = None
    prs: tuple[int, ...] = ()
    policy: Path | None = None
    branch: str | None = None
    onto: str = "HEAD"
    worktree: Path | None = None
    squash: bool = False
    direct: str = "skip"
    dry_run: bool = False
    pr_metadata: Path | None = None


@dataclass
class Result:
    status: str  # "done" | "conflict" | "nothing" | "planned"
    base: str = ""
    tip: str = ""
    branch: str | None = None
    worktree: str | None = None
    carried: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    conflict: dict[str, Any] | None = None
    planned: list[dict[str, Any]] = field(default_factory=list)  # --dry-run
    notes: list[str] = field(default_factory=list)
    pin_commit: str | None = None


def _runs(item: Item, metas: dict[str, Meta]) -> list[tuple[str | None, str]]:
    """(parent, last commit) of each run of consecutive first-parent steps."""
    runs: list[tuple[str | None, str]] = []
    for sha in item.steps:
        parents = metas[sha].parents
        first = parents[0] if parents else None
        if runs and runs[-1][1] == first:
            runs[-1] = (runs[-1][0], sha)
        else:
            runs.append((first, sha))
    return runs


class Engine:
    """The merge machinery of one run: the tree in memory, blobs, the upstream changes."""

    def __init__(
        self, downstream: Path, upstream: Path, transform: Transform, start_tree: str, scratch: Path
    ) -> None:
        self.downstream = downstream
        self.upstream = upstream
        self.blobs = Blobs(downstream, upstream, gitops.object_format(downstream))
        self.start_tree = start_tree
        self.merger = Merger(
            downstream=downstream,
            upstream=upstream,
            tree=Tree.read(downstream, start_tree),
            transform=transform,
            blobs=self.blobs,
            scratch=scratch,
        )
        self.start_entries = dict(self.merger.tree.entries)
        self.scratch = scratch
        self.metas: dict[str, Meta] = {}
        self.changes: dict[str, list[Raw]] = {}

    def meta(self, sha: str) -> Meta:
        if sha not in self.metas:
            self.metas[sha] = read_meta(self.blobs.up, sha)
        return self.metas[sha]

    def prefetch(self, items: Sequence[Item]) -> None:
        """Every upstream change the items need, through one ``git diff-tree --stdin``."""
        pairs: list[tuple[str, str | None]] = []
        for item in items:
            for sha in item.steps:
                self.meta(sha)
            pairs += [(last, parent) for parent, last in _runs(item, self.metas) if last not in self.changes]
        self.changes.update(upstream_changes(self.upstream, pairs))

    def merge(self, item: Item) -> Change:
        for sha in item.steps:
            self.meta(sha)
        left = {p for p, _ in item.excluded}
        change = Change()
        for parent, last in _runs(item, self.metas):
            raws = (
                self.changes[last] if last in self.changes else upstream_change(self.upstream, last, parent)
            )
            self.merger.apply(raws, excluded=left.__contains__, label=item.label, change=change)
            if change.conflicts:
                break
        return change

    def tree_now(self) -> str:
        """The in-memory tree as a tree object (its blobs must be in the downstream already)."""
        entries = self.merger.tree.entries
        diff: dict[str, Entry | None] = {p: e for p, e in entries.items() if self.start_entries.get(p) != e}
        diff.update({p: None for p in self.start_entries if p not in entries})
        if not diff:
            return self.start_tree
        index = gitops.Index(self.downstream, self.scratch, self.start_tree)
        index.update(diff)
        return index.write_tree()

    def close(self) -> None:
        self.blobs.close()


def _conflict_doc(item: Item, conflicts: Sequence[Conflict]) -> dict[str, Any]:
    return {
        "pr": item.pr,
        "title": item.title,
        "upstream_commit": item.upstream_commit,
        "files": [{"path": c.path, "why": c.why, "hunks": list(c.hunks)} for c in conflicts],
    }


# ---------------------------------------------------------------------------------------------
# Start


def start(
    downstream: Path,
    config: Config,
    transform: Transform,
    options: Options,
    *,
    upstream: Path | None = None,
    identity: dict[str, str] | None = None,
) -> Result:
    """Plan the carry and run it (or, with ``dry_run``, merge in memory and change nothing)."""
    from vimesync.repopaths import repository_path
    from vimesync.upstream import policy as policy_mod
    from vimesync.upstream.pipeline import walk_and_classify

    if state_mod.exists(downstream):
        raise state_mod.in_progress(state_mod.state_path(downstream))
    if options.direct not in ("skip", "include"):
        raise BadInput(f"--direct {options.direct!r}: expected skip or include")
    up = repository_path(upstream, config, "upstream_path")
    if up is None:
        raise BadInput("no upstream repository given", hint="pass --upstream PATH or set [upstream] path")
    onto = git.resolve(downstream, options.onto)
    walk = walk_and_classify(
        up,
        options.range_,
        policy=options.policy,
        downstream=downstream,
        pr_metadata=options.pr_metadata,
        config=config,
        downstream_rev=onto,
    )
    policy_path = options.policy or config.policy
    policy = policy_mod.load_policy(policy_path) if policy_path else None
    plan = build_plan(walk, prs=options.prs, direct=options.direct, policy=policy)
    result = Result(
        status="nothing",
        base=plan.base,
        tip=plan.tip,
        skipped=[s.to_json() for s in plan.skipped],
        notes=list(walk.notes) + list(plan.notes),
    )
    if not plan.items:
        return result
    if options.dry_run:
        return _dry_run(downstream, up, transform, onto, plan.items, result)
    name = options.branch or f"sync/{plan.tip[:8]}"
    ref = gitops.check_branch_name(downstream, name)
    if gitops.ref_exists(downstream, ref):
        raise BadInput(
            f"branch {name} already exists; vimesync carry never rewrites a branch",
            hint="pass --branch NAME, or delete that branch",
        )
    wt = (options.worktree or _default_worktree(downstream, name)).absolute()
    if os.path.lexists(wt):
        raise BadInput(f"--worktree {wt}: already exists", hint="pass --worktree DIR naming a new folder")
    pin = _pin_path(downstream, config)
    state = State(
        branch=name,
        worktree=str(wt),
        downstream=str(downstream.absolute()),
        upstream=str(up.absolute()),
        upstream_repo=config.upstream_repo,
        onto=onto,
        base=plan.base,
        tip=plan.tip,
        squash=options.squash,
        pin=pin,
        items=list(plan.items),
        last=onto,
        skipped=[s.to_json() for s in plan.skipped],
        transform=transform_doc(transform),
    )
    state_mod.create(downstream, state)
    gitops.create_branch(downstream, ref, onto)
    result = run(downstream, state, transform, identity=identity)
    result.notes[:0] = list(walk.notes) + list(plan.notes)
    return result


def _default_worktree(downstream: Path, branch: str) -> Path:
    root = downstream.absolute()
    return root.parent / f"{root.name}.{branch.replace('/', '-')}"


def _pin_path(downstream: Path, config: Config) -> str | None:
    pin = config.upstream_pin.file
    if pin is None:
        return None
    try:
        return Path(os.path.abspath(pin)).relative_to(downstream.absolute()).as_posix()
    except ValueError:
        return None


def _dry_run(
    downstream: Path, upstream: Path, transform: Transform, onto: str, items: Sequence[Item], result: Result
) -> Result:
    with scratch_dir("vimesync-carry-") as tmp:
        engine = Engine(downstream, upstream, transform, onto, Path(tmp))
        try:
            for item in items:
                change = engine.merge(item)
                entry: dict[str, Any] = {
                    "pr": item.pr,
                    "title": item.title,
                    "upstream_commit": item.upstream_commit,
                    "paths": sorted(change.paths),
                    "translation_hits": change.hits,
                    "left_out": sorted(set(change.left_out)),
                    "conflict": [c.path for c in change.conflicts],
                    "empty": not change.updates and not change.conflicts,
                }
                result.planned.append(entry)
                if not change.conflicts:
                    engine.merger.commit_change(change)
        finally:
            engine.close()
    result.status = "planned"
    return result


# ---------------------------------------------------------------------------------------------
# The loop


def _current_tree(downstream: Path, state: State) -> str:
    return state.squash_tree or gitops.tree_of(downstream, state.last)


def _identity(identity: dict[str, str] | None) -> dict[str, str]:
    env = dict(IDENTITY)
    env.update(identity or {})
    # Commits of our own (the pin bump, --squash) are authored by the committer unless told otherwise.
    for part in ("NAME", "EMAIL", "DATE"):
        if f"GIT_AUTHOR_{part}" not in (identity or {}) and f"GIT_COMMITTER_{part}" in env:
            env[f"GIT_AUTHOR_{part}"] = env[f"GIT_COMMITTER_{part}"]
    return env


CHECKPOINT = 50  # carried commits between two branch updates (a killed carry resumes from there)
KEEP_BYTES = 256 << 20  # or sooner, once the blobs written since the last one pass this


def run(
    downstream: Path, state: State, transform: Transform, *, identity: dict[str, str] | None = None
) -> Result:
    """Carry ``state.items[state.next:]``, then finish (squash commit, pin, worktree)."""
    who = _identity(identity)
    ref = f"refs/heads/{state.branch}"
    up = Path(state.upstream)
    committer = ident(
        who["GIT_COMMITTER_NAME"], who["GIT_COMMITTER_EMAIL"], raw_date(who.get("GIT_COMMITTER_DATE"))
    )
    with scratch_dir("vimesync-carry-") as tmp:
        engine = Engine(downstream, up, transform, _current_tree(downstream, state), Path(tmp))
        writer: FastImport | None = FastImport(downstream, ref, state.last)
        try:
            engine.prefetch(state.items[state.next :])
            landed = 0
            while state.phase == "items" and state.next < len(state.items):
                item = state.items[state.next]
                change = engine.merge(item)
                if change.conflicts:
                    _land(downstream, state, writer, engine)
                    writer = None
                    _stop_at_conflict(downstream, state, engine, change, item)
                    return _result(state, "conflict")
                tree = engine.merger.tree.entries
                real = [(p, e) for p, e in change.updates.items() if tree.get(p) != e]
                if not real:
                    state.skipped.append(_skip(item, EMPTY))
                    state.next += 1
                    continue
                assert writer is not None
                engine.blobs.flush(writer.blobs)
                engine.merger.commit_change(change)
                entry: dict[str, Any] = {
                    "pr": item.pr,
                    "title": item.title,
                    "upstream_commit": item.upstream_commit,
                    "paths": sorted(change.paths),
                    "commit": None,
                }
                if not state.squash:
                    metas = [engine.meta(s) for s in item.steps]
                    message = message_for(item, metas, state.upstream_repo, item.excluded)
                    who_up = metas[-1]
                    author = ident(
                        who_up.author_name, who_up.author_email, who_up.author_date or raw_date(None)
                    )
                    entry["commit"] = writer.commit(message, author, committer, real)
                    landed += 1
                if (landed and landed % CHECKPOINT == 0 and entry["commit"] is not None) or (
                    engine.blobs.kept_bytes > KEEP_BYTES
                ):
                    writer.checkpoint()
                    engine.blobs.release()  # readable from the downstream now
                state.carried.append(entry)
                state.next += 1
            _land(downstream, state, writer, engine)
            writer = None
        finally:
            if writer is not None:
                writer.kill()
            engine.close()
    return finish(downstream, state, identity=identity)


def _land(downstream: Path, state: State, writer: FastImport | None, engine: Engine) -> None:
    """Finish fast-import (the branch moves to the last carried commit); marks become shas."""
    if writer is None:
        return
    for c in state.carried:
        if isinstance(c.get("commit"), int):
            c["commit"] = writer.sha(c["commit"])
    last = writer.sha(writer.last_mark) if writer.last_mark is not None else None
    writer.close()
    if last is not None:
        state.last = last
    if state.squash:
        state.squash_tree = engine.tree_now()
    state_mod.save(downstream, state)


def _skip(item: Item, reason: str) -> dict[str, Any]:
    return {"pr": item.pr, "title": item.title, "reason": reason, "upstream_commit": item.upstream_commit}


def _record(
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
    entry = {"pr": item.pr, "title": item.title, "upstream_commit": item.upstream_commit, "paths": paths}
    if state.squash:
        state.squash_tree = tree
        state.carried.append({**entry, "commit": None})
        return
    metas = [engine.meta(s) if engine else _meta(state, s) for s in item.steps]
    message = message_for(item, metas, state.upstream_repo, item.excluded)
    commit = gitops.commit_tree(
        downstream, tree, [state.last], message, {**who, **plan_mod.author_env(metas[-1])}
    )
    gitops.move_branch(downstream, ref, commit, state.last)
    state.last = commit
    state.carried.append({**entry, "commit": commit})


def _meta(state: State, sha: str) -> Meta:
    with git.CatFile(Path(state.upstream)) as cat:
        return read_meta(cat, sha)


def _stop_at_conflict(downstream: Path, state: State, engine: Engine, change: Change, item: Item) -> None:
    """Leave the worktree in git's conflict state for ``item`` and record it."""
    current = _current_tree(downstream, state)
    engine.blobs.flush(blob_writer(downstream, engine.scratch))  # the clean part and every stage
    index = gitops.Index(downstream, engine.scratch, current)
    index.update(change.updates)
    clean = index.write_tree()
    wt = Path(state.worktree)
    if state.worktree_tree is None:
        gitops.add_worktree(downstream, wt, state.branch)
        shown = gitops.tree_of(downstream, state.last)
    else:
        shown = state.worktree_tree
    gitops.two_way(wt, shown, current)
    gitops.two_way(wt, current, clean)
    gitops.stage_conflicts(wt, change.conflicts)
    state.worktree_tree = clean
    state.pre_conflict_tree = current
    state.conflict = _conflict_doc(item, change.conflicts)
    state_mod.save(downstream, state)


def finish(downstream: Path, state: State, *, identity: dict[str, str] | None = None) -> Result:
    """The squash commit, the pin bump, the worktree at the branch tip; the state removed."""
    who = _identity(identity)
    ref = f"refs/heads/{state.branch}"
    if state.phase == "items":
        if state.squash and state.squash_tree and state.squash_tree != gitops.tree_of(downstream, state.onto):
            message = _squash_message(state)
            commit = gitops.commit_tree(downstream, state.squash_tree, [state.onto], message, who)
            gitops.move_branch(downstream, ref, commit, state.last)
            state.last = commit
            for c in state.carried:
                c["commit"] = commit
        state.phase = "pin"
        state_mod.save(downstream, state)
    pin_commit = None
    if state.phase == "pin":
        if state.pin:
            pin_commit = bump_synced(downstream, state, ref, who)
        state.phase = "done"
        state_mod.save(downstream, state)
    wt = Path(state.worktree)
    if state.worktree_tree is None:
        gitops.add_worktree(downstream, wt, state.branch)
    else:
        gitops.two_way(wt, state.worktree_tree, gitops.tree_of(downstream, state.last))
    state.worktree_tree = gitops.tree_of(downstream, state.last)
    result = _result(state, "done")
    result.pin_commit = pin_commit
    state_mod.remove(downstream)
    return result


def _squash_message(state: State) -> str:
    subject = f"Carry {len(state.carried)} upstream change(s) through {state.tip[:8]}"
    lines = [f"- {plan_mod.clean_text(c['title'])}" for c in state.carried]
    trailers = []
    for c in state.carried:
        item = next(i for i in state.items if i.upstream_commit == c["upstream_commit"])
        trailers += plan_mod.trailers(item, state.upstream_repo)
    return f"{subject}\n\n" + "\n".join(lines) + "\n\n" + "\n".join(trailers) + "\n"


def _result(state: State, status: str) -> Result:
    return Result(
        status=status,
        base=state.base,
        tip=state.tip,
        branch=state.branch,
        worktree=state.worktree,
        carried=list(state.carried),
        skipped=list(state.skipped),
        conflict=state.conflict,
    )
