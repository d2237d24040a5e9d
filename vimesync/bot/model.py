"""What one run of the sync bot observed, and the plan it makes of it: plain frozen data."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from vimesync.github import OpenPull

SHA = re.compile(r"[0-9a-f]{40}")
BRANCH_PREFIX = "sync/"
LABEL = "vimesync-sync"  # the bot's PR carries it
DASHBOARD_LABEL = "vimesync-dashboard"  # and its dashboard issue this one


@dataclass(frozen=True)
class BotMark:
    """What the bot keeps in its PR's description: the sha it last pushed to the PR's branch and
    the upstream tip that push synced."""

    pushed: str
    tip: str


@dataclass(frozen=True)
class Declined:
    """A sync PR of the bot closed unmerged: its number and the upstream tip it held."""

    number: int
    tip: str


@dataclass(frozen=True)
class Observed:
    """The state a run starts from: the default branch, the upstream pin it holds, the upstream's
    tip, and the bot's open PR (its mark read from its description) if any; with no PR open, the
    bot's PR closed unmerged for this very tip, where ``sync/<tip8>`` is on the remote, and the
    shas the bot's state lines say it pushed (in any of its PRs the listing holds)."""

    base: str  # the default branch's name
    pin: str  # the upstream commit the default branch says it synced
    tip: str  # the upstream tip (as the job fetched it)
    pull: OpenPull | None = None
    mark: BotMark | None = None
    declined: Declined | None = None  # the maintainers said no to this tip
    branch_at: str | None = None  # sync/<tip8> on the remote (None: absent, or not asked)
    bot_pushed: frozenset[str] = frozenset()
    branch_is_sync: bool = False  # sync/<tip8> holds the default branch and carries upstream PRs


class BotCase(str, Enum):
    """What the run does (the issue's cases)."""

    UP_TO_DATE = "up-to-date"  # nothing pending and no PR: the dashboard only
    OPEN = "open"  # no PR: sync, push a new branch, open the PR
    FOLLOW = "follow"  # the PR's branch is the bot's own and upstream moved: sync again, push with a lease
    HOLD = (
        "hold"  # the PR's branch has someone else's commits: never rewritten, the body says what is pending
    )
    CURRENT = "current"  # the PR already holds the tip: nothing to sync
    DECLINED = "declined"  # the bot's PR for this tip was closed unmerged: not pushed again
    ADOPT = (
        "adopt"  # sync/<tip8> holds the default branch and more, with no PR: its PR opened, never pushed to
    )
    STALE_BRANCH = "stale-branch"  # sync/<tip8> exists with no PR, not as the bot left it: left alone


@dataclass(frozen=True)
class BotPlan:
    """The actions of one run, before any is performed."""

    case: BotCase
    branch: str | None = None  # the PR's head branch (to push, or pushed by someone else)
    lease: str | None = None  # the sha the remote branch must be at for the push ("": absent)
    pull: int | None = None  # the open PR the run updates
    since: str | None = None  # the upstream tip the PR holds (what is pending is after it)
    why: str = ""

    @property
    def syncs(self) -> bool:
        return self.case in (BotCase.OPEN, BotCase.FOLLOW)


@dataclass(frozen=True)
class PendingPR:
    """An upstream PR in the dashboard: its number, title and, when excluded, why."""

    number: int
    title: str
    reason: str = ""


@dataclass(frozen=True)
class SyncOutcome:
    """Where the bot's sync stood when it ended: the step it stopped at (None: every gate holds),
    the decision and the next command, the figures of its steps."""

    head: str | None  # the sync branch's commit (None: the carry made none)
    stopped: str | None = None
    decision: str | None = None
    next: str | None = None
    steps: tuple[tuple[str, bool, str], ...] = ()  # (name, ok, figure)
    title: str | None = None  # the report's title for the head (None: no head)


Stop = tuple[str, "str | None", "str | None"]  # (step, decision, next command)


@dataclass(frozen=True)
class MergedPatch:
    """An engine patch whose header names an upstream PR that merged: the engine, the patch, the
    PR (``owner/name#N``) and whether the engine pin holds the merge (None: not known)."""

    engine: str
    patch: str
    pr: str
    in_pin: bool | None


@dataclass(frozen=True)
class StaleRecord:
    """A record of the sync made at a head other than its evidence head: its kind, name, head."""

    kind: str
    name: str
    sha: str


@dataclass(frozen=True)
class Board:
    """What the dashboard shows: the same board gives the same text."""

    upstream: str  # the upstream's name
    base: str
    pin: str
    tip: str
    pull: OpenPull | None
    stopped: str | None  # where the PR's sync stopped
    pending: tuple[PendingPR, ...] = ()
    excluded: tuple[PendingPR, ...] = ()
    unpushed: Stop | None = None  # a stop with nothing to push (no PR)
    declined: Declined | None = None  # no PR: the one for this tip was closed unmerged
    stale_branch: tuple[str, str] | None = None  # no PR: (branch, sha) left alone on the remote
    remote: str = "origin"
    failed: str | None = None  # the sync could not run: why, in the bot's fixed words
    merged: tuple[MergedPatch, ...] = ()
    merged_unchecked: str | None = None  # why the engine PRs were not (all) asked about
    stale: tuple[StaleRecord, ...] = ()
    stale_unread: str | None = None  # why the sync PR's records say nothing (no PR, no records)
    held: bool = False  # the PR's branch has commits the bot did not push
    blind: str | None = None  # the run could not observe the upstream: why, in the bot's fixed words
