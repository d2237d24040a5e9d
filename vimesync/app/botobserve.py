"""What one bot run reads before it plans: the upstream pin and tip, the walk between them, the
bot's open PR (one listing) and the state its description keeps; and what is pending of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.app import upstreamsteps
from vimesync.app.workspace import Workspace
from vimesync.bot.model import BRANCH_PREFIX, BotMark, Observed, PendingPR
from vimesync.bot.text import read_mark
from vimesync.errors import BadInput
from vimesync.github import GitHubClient, OpenPull
from vimesync.upstream.model import APPLICABLE, EXCLUDED, WalkResult


@dataclass
class Seen:
    """What the run read, kept for the steps after the plan."""

    observed: Observed
    walk: WalkResult | None
    pulls: list[OpenPull] = field(default_factory=list)
    stopped: str | None = None  # where the PR's last sync stopped (its state line)


def observe(ws: Workspace, client: GitHubClient, base: str) -> Seen:
    """The upstream tip, the pin, the walk between them, and the bot's open PR (one listing)."""
    upstream = ws.require_upstream()
    rng = ws.upstream_range
    if rng.base is None:
        raise BadInput("the default branch has no upstream pin: nothing to sync from", hint="vimesync init")
    pin, tip = git.resolve(upstream, rng.base), git.resolve(upstream, rng.tip)
    walk = upstreamsteps.walk(ws) if pin != tip else None
    pulls = client.open_pulls()
    pull, mark, stopped = _bot_pull(pulls, base)
    return Seen(Observed(base=base, pin=pin, tip=tip, pull=pull, mark=mark), walk, pulls, stopped)


def _bot_pull(pulls: list[OpenPull], base: str) -> tuple[OpenPull | None, BotMark | None, str | None]:
    """The bot's PR: into ``base``, from a ``sync/`` branch, with the bot's state in its body."""
    for pull in pulls:
        if pull.base_ref != base or not pull.head_ref.startswith(BRANCH_PREFIX):
            continue
        found = read_mark(pull.body)
        if found is not None:
            return pull, found[0], found[1]
    return None, None, None


def pending_prs(upstream: Path, walk: WalkResult | None, since: str | None) -> list[PendingPR]:
    """The applicable upstream PRs not in ``since`` (the upstream tip the sync PR holds)."""
    if walk is None:
        return []
    out = []
    for pr in walk.by_status(APPLICABLE):
        if since is not None and git.is_ancestor(upstream, pr.merge_commit, since):
            continue
        out.append(PendingPR(pr.number, pr.title))
    return out


def excluded_prs(walk: WalkResult | None) -> list[PendingPR]:
    if walk is None:
        return []
    return [
        PendingPR(p.number, p.title, p.decision.reason if p.decision else "")
        for p in walk.by_status(EXCLUDED)
    ]
