"""``vimesync carry``: start, continue, skip, abort and report on a carry.

A carry creates the sync branch (``sync/<tip8>``, from ``--onto``) and commits one item after the
other through a temporary index (no checkout per PR); the branch moves forward after each commit.
The linked worktree is made when the carry stops at a conflict (in git's own conflict state) or
when it ends. The user's checkout, index and branch are never touched; nothing is pushed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vimesync import git
from vimesync.carry import gitops, provenance
from vimesync.carry import state as state_mod
from vimesync.carry.engine import Engine
from vimesync.carry.fastimport import FastImport, ident, raw_date
from vimesync.carry.finish import current_tree, finish, identity_env, stop_at_conflict
from vimesync.carry.model import (
    EMPTY,
    Carried,
    CarryJob,
    CarryPhase,
    CarryRun,
    CarryStatus,
    DryRunItem,
    Item,
    SkippedItem,
)
from vimesync.carry.plan import build_plan, message_for
from vimesync.carry.state import State
from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.safefs import scratch_dir
from vimesync.upstream.model import APPLICABLE, WalkResult
from vimesync.upstream.policy import Policy
from vimesync.upstream.translate import Transform, transform_doc


@dataclass(frozen=True)
class CarryOptions:
    """What a new carry's own flags say (the range, policy and repositories are the sync's)."""

    prs: tuple[int, ...] = ()
    branch: str | None = None
    onto: str = "HEAD"
    worktree: Path | None = None
    squash: bool = False
    direct: str = "skip"
    dry_run: bool = False

    def given(self) -> list[str]:
        """The flags given (not at their defaults): a carry in progress has its own."""
        given = (
            ("--pr", self.prs),
            ("--branch", self.branch),
            ("--onto", self.onto if self.onto != "HEAD" else None),
            ("--worktree", self.worktree),
            ("--squash", self.squash or None),
            ("--direct", self.direct if self.direct != "skip" else None),
            ("--dry-run", self.dry_run or None),
        )
        return [flag for flag, value in given if value]


# ---------------------------------------------------------------------------------------------
# Start


def check_direct(direct: str) -> None:
    if direct not in ("skip", "include"):
        raise BadInput(f"--direct {direct!r}: expected skip or include")


def start(
    downstream: Path,
    config: Config,
    transform: Transform,
    options: CarryOptions,
    walk: WalkResult,
    policy: Policy | None,
    *,
    upstream: Path,
    job: CarryJob,
) -> CarryRun:
    """Plan the carry of ``walk`` (classified at ``options.onto``) and run it (or, with
    ``dry_run``, merge in memory and change nothing)."""
    if state_mod.exists(downstream):
        raise state_mod.in_progress(state_mod.state_path(downstream))
    check_direct(options.direct)
    up = upstream
    onto = git.resolve(downstream, options.onto)
    plan = build_plan(walk, prs=options.prs, direct=options.direct, policy=policy)
    synced, held = synced_to(walk, options.prs)
    notes = list(walk.notes) + list(plan.notes)
    if held:
        moves = f"moves to {synced[:12]}" if synced != walk.base else f"stays at {walk.base[:12]}"
        notes.append(
            f"the upstream pin's synced {moves}, not {walk.tip[:12]}: {', '.join(held)} applicable"
            " and not picked by --pr (the next carry walks them)"
        )
    result = CarryRun(
        status=CarryStatus.NOTHING, base=plan.base, tip=plan.tip, skipped=list(plan.skipped), notes=notes
    )
    if not plan.items:
        return result
    if options.dry_run:
        return _dry_run(downstream, up, transform, onto, plan.items, result, job)
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
        items=[replace(i, title=state_mod.kept_title(i.title)) for i in plan.items],
        last=onto,
        skipped=[replace(s, title=state_mod.kept_title(s.title)) for s in plan.skipped],
        transform=transform_doc(transform),
        synced=synced,
    )
    state_mod.create(downstream, state)
    gitops.create_branch(downstream, ref, onto)
    result = run(downstream, state, transform, job)
    result.notes[:0] = notes
    return result


def extend(
    downstream: Path,
    config: Config,
    transform: Transform,
    options: CarryOptions,
    walk: WalkResult,
    policy: Policy | None,
    *,
    upstream: Path,
    job: CarryJob,
) -> CarryRun:
    """Carry ``options.prs`` of ``walk`` (classified at the branch's tip) onto ``options.branch``,
    which exists and is checked out (clean) in ``options.worktree``: a sync's, whose carry left them out
    at a conflict. No new branch, no pin bump (the sync's carry made it); --abort puts the branch
    and the worktree back at its tip."""
    if state_mod.exists(downstream):
        raise state_mod.in_progress(state_mod.state_path(downstream))
    assert options.branch is not None and options.worktree is not None
    tip = git.resolve(downstream, f"refs/heads/{options.branch}")
    plan = build_plan(walk, prs=options.prs, direct="skip", policy=policy)
    result = CarryRun(
        status=CarryStatus.NOTHING, base=plan.base, tip=plan.tip, notes=list(walk.notes) + list(plan.notes)
    )
    if not plan.items:
        return result
    state = State(
        branch=options.branch,
        worktree=str(options.worktree.absolute()),
        downstream=str(downstream.absolute()),
        upstream=str(upstream.absolute()),
        upstream_repo=config.upstream_repo,
        onto=tip,
        base=plan.base,
        tip=plan.tip,
        squash=False,
        pin=None,
        items=[replace(i, title=state_mod.kept_title(i.title)) for i in plan.items],
        last=tip,
        worktree_tree=gitops.tree_of(downstream, tip),
        transform=transform_doc(transform),
    )
    state_mod.create(downstream, state)
    done = run(downstream, state, transform, job)
    done.notes[:0] = result.notes
    return done


def synced_to(walk: WalkResult, prs: Sequence[int]) -> tuple[str, list[str]]:
    """Where the pin's ``synced`` may move: TIP, or with a selection (``--pr``) the last upstream
    commit before the first applicable PR it leaves behind (BASE: it stays), so that the next
    carry's walk still holds that PR; and the PRs left behind ("#N")."""
    if not prs:
        return walk.tip, []
    wanted = set(prs)
    first = set(walk.first_parents)
    position = {sha: i for i, sha in enumerate(walk.first_parents)}
    held = [
        pr
        for pr in walk.prs
        if pr.number not in wanted and (pr.decision is None or pr.decision.status == APPLICABLE)
    ]
    if not held:
        return walk.tip, []
    starts = [
        min((position[s] for s in pr.commits if s in first), default=position.get(pr.merge_commit, 0))
        for pr in held
    ]
    at = min(starts)
    synced = walk.first_parents[at - 1] if at > 0 else walk.base
    return synced, [f"#{pr.number}" for pr in sorted(held, key=lambda p: p.number)]


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
    downstream: Path,
    upstream: Path,
    transform: Transform,
    onto: str,
    items: Sequence[Item],
    result: CarryRun,
    job: CarryJob,
) -> CarryRun:
    with scratch_dir("vimesync-carry-") as tmp:
        engine = Engine(downstream, upstream, transform, onto, Path(tmp), job.budget)
        # Paths an item predicted to conflict touches: its change is missing from the tree the
        # later items meet, so their conflicts there may only follow from it (knock-on).
        missing: dict[str, str] = {}
        try:
            for i, item in enumerate(items):
                if job.progress is not None:
                    job.progress(i, len(items))
                change = engine.merge(item)
                knock_on = sorted({c.path for c in change.conflicts if c.path in missing})
                entry = DryRunItem(
                    pr=item.pr,
                    title=item.title,
                    upstream_commit=item.upstream_commit,
                    paths=tuple(sorted(change.paths)),
                    translation_hits=change.hits,
                    left_out=tuple(sorted(set(change.left_out))),
                    conflict=tuple(c.path for c in change.conflicts),
                    empty=not change.updates and not change.conflicts,
                    knock_on=tuple(knock_on),
                    after=tuple(sorted({missing[p] for p in knock_on})),
                )
                result.planned.append(entry)
                if not change.conflicts:
                    engine.merger.commit_change(change)
                else:
                    for path in change.paths:
                        missing.setdefault(path, item.label)
            if job.progress is not None:
                job.progress(len(items), len(items))
        finally:
            engine.close()
    result.status = CarryStatus.PLANNED
    return result


# ---------------------------------------------------------------------------------------------
# The loop


CHECKPOINT = 50  # carried commits between two branch updates (a killed carry resumes from there)
KEEP_BYTES = 256 << 20  # or sooner, once the blobs written since the last one pass this


def run(
    downstream: Path,
    state: State,
    transform: Transform,
    job: CarryJob,
) -> CarryRun:
    """Carry ``state.items[state.next:]``, then finish (squash commit, pin, worktree)."""
    who = identity_env(job.identity)
    ref = f"refs/heads/{state.branch}"
    up = Path(state.upstream)
    committer = ident(
        who["GIT_COMMITTER_NAME"], who["GIT_COMMITTER_EMAIL"], raw_date(who.get("GIT_COMMITTER_DATE"))
    )
    with scratch_dir("vimesync-carry-") as tmp:
        engine = Engine(downstream, up, transform, current_tree(downstream, state), Path(tmp), job.budget)
        writer: FastImport | None = FastImport(downstream, ref, state.last)
        marks: dict[int, int] = {}  # carried entry -> the fast-import mark of its commit, until landed
        try:
            engine.prefetch(state.items[state.next :])
            landed = 0
            while state.phase is CarryPhase.ITEMS and state.next < len(state.items):
                if job.progress is not None:
                    job.progress(state.next, len(state.items))
                item = state.items[state.next]
                change = engine.merge(item)
                if change.conflicts:
                    left = provenance.left_out(state.skipped)
                    change.conflicts[:] = provenance.with_hints(up, change.parent, change.conflicts, left)
                    _land(downstream, state, writer, engine, marks)
                    writer = None
                    stop_at_conflict(downstream, state, engine, change, item)
                    return state.result(CarryStatus.CONFLICT)
                tree = engine.merger.tree.entries
                real = [(p, e) for p, e in change.updates.items() if tree.get(p) != e]
                if not real:
                    state.skipped.append(SkippedItem.of(item, EMPTY))
                    state.next += 1
                    continue
                assert writer is not None
                engine.blobs.flush(writer.blobs)
                engine.merger.commit_change(change)
                paths = tuple(state_mod.kept_paths(sorted(change.paths)))
                if not state.squash:
                    metas = [engine.meta(s) for s in item.steps]
                    message = message_for(item, metas, state.upstream_repo, item.excluded)
                    who_up = metas[-1]
                    author = ident(
                        who_up.author_name, who_up.author_email, who_up.author_date or raw_date(None)
                    )
                    marks[len(state.carried)] = writer.commit(message, author, committer, real)
                    landed += 1
                if (landed and landed % CHECKPOINT == 0 and not state.squash) or (
                    engine.blobs.kept_bytes > KEEP_BYTES
                ):
                    writer.checkpoint()
                    engine.blobs.release()  # readable from the downstream now
                state.carried.append(Carried(item.pr, item.title, item.upstream_commit, paths, None))
                state.next += 1
            if job.progress is not None:  # n/n: every item carried, before the finish
                job.progress(state.next, len(state.items))
            _land(downstream, state, writer, engine, marks)
            writer = None
        finally:
            if writer is not None:
                writer.kill()
            engine.close()
    return finish(downstream, state, identity=job.identity)


def _land(
    downstream: Path, state: State, writer: FastImport | None, engine: Engine, marks: dict[int, int]
) -> None:
    """Finish fast-import (the branch moves to the last carried commit); marks become shas."""
    if writer is None:
        return
    for i, mark in marks.items():
        state.carried[i] = replace(state.carried[i], commit=writer.sha(mark))
    marks.clear()
    last = writer.sha(writer.last_mark) if writer.last_mark is not None else None
    writer.close()
    if last is not None:
        state.last = last
    if state.squash:
        state.squash_tree = engine.tree_now()
    state_mod.save(downstream, state)
