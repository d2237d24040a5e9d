"""The conflicts a sync's carry resolved by hand, as a step over the workspace: the carried items of
the walk replayed (:mod:`vimesync.carry.replay`) between the baseline and the head.

Computed once per workspace: the report, ``sop status``, the audit and ``audit review`` of one
command (``vimesync sync`` runs them on one workspace) share it.
"""

from __future__ import annotations

from dataclasses import replace

from vimesync.app import upstreamsteps
from vimesync.app.workspace import Workspace
from vimesync.carry.resolutions import Resolutions
from vimesync.errors import BadInput

REPLAY_SECONDS = 600.0  # wall time of one replay's merging (the carry's own budget may be lower)


def resolutions(ws: Workspace) -> Resolutions | None:
    """The carried items of the sync with resolved paths (None: no upstream, downstream or
    baseline to replay them with, or no range to walk)."""
    return ws.once("resolutions", lambda: _replayed(ws))


def resolved_paths(ws: Workspace) -> dict[str, tuple[str, ...]]:
    """Every resolved path -> the PRs (``#N``) whose carry resolved it."""
    done = resolutions(ws)
    return done.paths() if done is not None else {}


def _replayed(ws: Workspace) -> Resolutions | None:
    from vimesync.carry.budget import Budget
    from vimesync.carry.plan import build_plan
    from vimesync.carry.replay import ReplayInputs, replay
    from vimesync.upstream.policy import load_policy
    from vimesync.upstream.translate import load_transform

    if ws.upstream is None or ws.downstream is None or ws.baseline is None or ws.head is None:
        return None
    try:
        walked = upstreamsteps.walked(ws)
    except BadInput:  # no range to walk: the report and the audit say so themselves
        return None
    carried = upstreamsteps.carried_at_head(ws, walked)
    policy = load_policy(ws.policy, ws.reader) if ws.policy else None
    plan = build_plan(walked, direct="include", policy=policy)
    items = tuple(i for i in plan.items if i.pr is None or i.pr in carried)
    budget = Budget.from_settings(ws.settings)
    budget = replace(budget, max_seconds=min(budget.max_seconds, REPLAY_SECONDS))
    inputs = ReplayInputs(
        downstream=ws.downstream,
        upstream=ws.upstream,
        transform=load_transform(ws.config, path_map=ws.path_map),
        items=items,
        baseline=ws.baseline,
        head=ws.head,
        budget=budget,
    )
    return replay(inputs)
