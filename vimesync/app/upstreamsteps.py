"""The upstream steps of a sync, each once, over a resolved
:class:`~vimesync.app.workspace.Workspace`: the walk of its upstream range, what its head carries
of it, what a carry skipped at a conflict, the upstream's name. ``walk``, ``carry``, ``report``,
``sop status`` and ``vimesync sync`` all call these (the other steps: :mod:`vimesync.app.steps`).

Kept apart from the engine, audit and CI steps so that a walk loads none of their modules: a walk
of a whole upstream history is a command run often, and its start-up counts (bench_startup.py).
"""

from __future__ import annotations

import re

from vimesync import git
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.workspace import Workspace
from vimesync.upstream.model import APPLICABLE, MIRRORED, WalkResult


def walk(ws: Workspace, *, at: str | None = None, progress: Progress = no_progress) -> WalkResult:
    """The upstream range of the sync, classified by the policy and marked mirrored where the
    downstream at ``at`` (default: the baseline: PRs this sync carries are applicable, not
    "already mirrored") carries them. Once per workspace and ``at``: the walk step of a sync and
    its carry share it. ``progress``: told each part (``walk 1/2: walking the upstream range``)."""
    return ws.once(("walk", at or ws.baseline), lambda: _walk(ws, at, progress))


def take_walk(ws: Workspace, result: WalkResult, *, at: str) -> None:
    """``result`` as ``ws``'s walk at ``at`` (:mod:`vimesync.app.syncwalk` decides when another
    workspace's walk is the one ``ws`` would make)."""
    ws.once(("walk", at), lambda: result)


def _walk(ws: Workspace, at: str | None, progress: Progress) -> WalkResult:
    from vimesync.upstream.pipeline import WalkSpec, parse_range, walk_and_classify

    upstream = ws.require_upstream()
    if ws.upstream_range.base is None and not ws.upstream_range.explicit:
        parse_range(None, ws.config)  # raises: no --range and nothing synced (it names the pin)
    spec = WalkSpec(
        upstream=upstream,
        range=ws.upstream_range,
        policy=ws.policy,
        downstream=ws.downstream,
        downstream_rev=at or ws.baseline,
        pr_metadata=ws.flags.pr_metadata,
        github=ws.settings.github if ws.flags.github else None,
        accept_similar=ws.flags.accept_similar,
    )
    phase = Phases(progress, "walk", 2 if ws.downstream is not None else 1)
    return walk_and_classify(spec, ws.config, reader=ws.reader, phase=phase)


def walked(ws: Workspace) -> WalkResult:
    """:func:`walk` of the sync's range at the baseline (once per workspace, as every walk): the
    report, ``sop status`` and the replay of the carry (:mod:`vimesync.app.resolved`) share it."""
    return walk(ws)


def carried_at_head(ws: Workspace, walk_result: WalkResult) -> frozenset[int]:
    """:func:`carried` of the workspace's :func:`walked` (``walk_result``), once per workspace
    (needs a downstream and a head)."""
    return ws.once("carried at head", lambda: carried(ws, walk_result))


def carried(ws: Workspace, walked: WalkResult) -> frozenset[int]:
    """The applicable PRs (at the baseline) that the head carries."""
    from vimesync.upstream.pipeline import mirrored_at

    assert ws.downstream is not None and ws.head is not None
    applicable = walked.by_status(APPLICABLE)
    marked = mirrored_at(
        ws.require_upstream(), applicable, ws.downstream, ws.head, config=ws.config, base=walked.base
    )
    return frozenset(pr.number for pr in marked if pr.decision is not None and pr.decision.status == MIRRORED)


_SKIPPED_RE = re.compile(r"^(?:[\w.-]+/[\w.-]+)?#(\d{1,9})\s*$")


def skipped_at_conflict(ws: Workspace) -> frozenset[int]:
    """PRs a carry between the baseline and the head skipped at a conflict (its ``Carry-Skipped``
    trailers, as git reads trailers: the last paragraph of a message)."""
    assert ws.downstream is not None and ws.baseline is not None and ws.head is not None
    out = git.run(
        ws.downstream,
        [
            "log",
            "--format=%(trailers:key=Carry-Skipped,valueonly,separator=%x00)%x00",
            f"{ws.baseline}..{ws.head}",
        ],
    )
    found = set()
    for value in out.decode("utf-8", "replace").split("\0"):
        m = _SKIPPED_RE.match(value.strip())
        if m:
            found.add(int(m.group(1)))
    return frozenset(found)


def upstream_repo(ws: Workspace) -> str | None:
    """``owner/name`` of the upstream: the config's, else its clone's ``origin`` on github.com."""
    from vimesync.report.links import github_repo_of

    if ws.config.upstream_repo or ws.upstream is None:
        return ws.config.upstream_repo
    url = git.run(ws.upstream, ["config", "--get", "remote.origin.url"], check=False).decode().strip()
    return github_repo_of(url) if url else None


def upstream_name(ws: Workspace) -> str:
    repo = upstream_repo(ws)
    return ws.config.upstream_name if ws.config.file or not repo else repo.split("/")[1]
