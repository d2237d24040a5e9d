"""The carry's model: what it brings over (:class:`Item`), what it reports about each item
(:class:`Carried`, :class:`SkippedItem`, :class:`CarryConflict`, :class:`DryRunItem`), where it
stands (:class:`CarryStatus`, :class:`CarryPhase`) and what one run of it ends with
(:class:`CarryRun`, :class:`Aborted`).

The entries are kept in the carry's state file (``carry/state.py``) as the JSON objects
:meth:`to_json` writes, and read back through :func:`vimesync.safefs.decode` by these field
types: a state file is read as untrusted, so every field says what it accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal

from vimesync.carry.budget import Budget
from vimesync.carry.merge import MergeConflict
from vimesync.safefs import Range, Size, Text

OID_PATTERN = r"[0-9a-f]{40}|[0-9a-f]{64}"
Oid = Annotated[str, Text(pattern=OID_PATTERN, what="a full commit sha")]
PrNumber = Annotated[int, Range(1, 10**9 - 1)]
ItemKind = Literal["merge", "squash", "rebase", "direct"]

# Why an item made no commit (the pin bump's message and the report read these words).
EMPTY = "already in the downstream (empty after the merge)"
EMPTY_RESOLVED = "empty after the conflict was resolved"
SKIPPED = "skipped at a conflict (--skip)"


@dataclass(frozen=True)
class CarryJob:
    """What the job sets for one carry run: who commits (``GIT_COMMITTER_*``, checked by
    ``app.carry.committer``; none: git's own identity) and how far a run may go."""

    identity: dict[str, str] | None = None
    budget: Budget = field(default_factory=Budget)
    # told (items done, items in all) as the carry goes: the command's progress (None: none)
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)


class CarryStatus(str, Enum):
    """Where a carry stands: its JSON ``status``."""

    DONE = "done"
    CONFLICT = "conflict"  # stopped at a conflict: resolve, git add, --continue
    NOTHING = "nothing"  # nothing to carry in the range
    PLANNED = "planned"  # --dry-run
    INTERRUPTED = "interrupted"  # --status: stopped between two items (no conflict)


class CarryPhase(str, Enum):
    """The carry's phase in its state file: the items, then the pin bump, then done."""

    ITEMS = "items"
    PIN = "pin"
    DONE = "done"


@dataclass(frozen=True)
class Item:
    """One thing to carry: a PR, or a direct commit (``pr`` None)."""

    pr: PrNumber | None
    title: str
    kind: ItemKind
    steps: Annotated[tuple[Oid, ...], Size(1 << 20, min=1)]  # first-parent commits, oldest first;
    # each is carried against its first parent
    upstream_commit: Oid  # the last of them: the Upstream-Commit trailer
    excluded: tuple[tuple[str, str], ...] = ()  # (upstream glob rule text, why) of left-out paths

    @property
    def label(self) -> str:
        return f"#{self.pr}" if self.pr is not None else self.upstream_commit[:12]

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "kind": self.kind,
            "steps": list(self.steps),
            "upstream_commit": self.upstream_commit,
            "excluded": [list(e) for e in self.excluded],
        }


@dataclass(frozen=True)
class SkippedItem:
    """An item not carried, and why (excluded, mirrored, a direct commit, empty, --skip)."""

    pr: PrNumber | None
    title: str
    reason: str
    upstream_commit: str = ""

    @classmethod
    def of(cls, item: Item, reason: str) -> SkippedItem:
        return cls(item.pr, item.title, reason, item.upstream_commit)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "reason": self.reason,
            "upstream_commit": self.upstream_commit,
        }


def left_out(skipped: Sequence[SkippedItem]) -> str:
    """The items a carry did not carry, counted by why: ``1 excluded, 2 already downstream,
    1 skipped at a conflict`` ("" when none). Only ``--skip`` counts as skipped: a PR the policy
    excludes is excluded, one the downstream holds already downstream."""
    counts: dict[str, int] = {}
    for s in skipped:
        counts[_why(s.reason)] = counts.get(_why(s.reason), 0) + 1
    return ", ".join(f"{counts[w]:,} {w}" for w in _LEFT_OUT if w in counts)


# The words a carry's summary counts its left-out items by, in this order (reasons are ours:
# carry.plan and carry.session write them).
_LEFT_OUT = (
    "excluded",
    "already downstream",
    "empty",
    "direct (not carried)",
    "skipped at a conflict",
    "left out",
)


def _why(reason: str) -> str:
    if reason.startswith("excluded by the policy"):
        return "excluded"
    if reason.startswith(("already downstream", "already in the downstream")):
        return "already downstream"
    if reason == EMPTY_RESOLVED:
        return "empty"
    if reason.startswith("direct push"):
        return "direct (not carried)"
    if reason == SKIPPED:
        return "skipped at a conflict"
    return "left out"


@dataclass(frozen=True)
class Carried:
    """An item carried: the downstream paths it changed, the commit it made."""

    pr: PrNumber | None  # None: a direct commit
    title: str
    upstream_commit: str
    paths: tuple[str, ...]
    commit: Oid | None  # the downstream commit (None until a --squash carry lands)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "paths": list(self.paths),
            "commit": self.commit,
        }


@dataclass(frozen=True)
class ConflictFile:
    """One file of the item the carry stopped at: why it conflicts, which upstream hunks."""

    path: str
    why: str
    hunks: tuple[str, ...]
    # the left-out upstream PR the conflicting lines come from (the state file has it only then)
    hint: str = field(default="", metadata={"omit_default": True})

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "why": self.why, "hunks": list(self.hunks), "hint": self.hint or None}


@dataclass(frozen=True)
class CarryConflict:
    """The item the carry stopped at, and its files in conflict."""

    pr: PrNumber | None
    title: str
    upstream_commit: str
    files: tuple[ConflictFile, ...]

    @classmethod
    def of(cls, item: Item, conflicts: Sequence[MergeConflict]) -> CarryConflict:
        files = tuple(ConflictFile(c.path, c.why, c.hunks, c.hint) for c in conflicts)
        return cls(item.pr, item.title, item.upstream_commit, files)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "files": [f.to_json() for f in self.files],
        }


@dataclass(frozen=True)
class DryRunItem:
    """One item of a --dry-run: what carrying it would do."""

    pr: int | None
    title: str
    upstream_commit: str
    paths: tuple[str, ...]
    translation_hits: int
    left_out: tuple[str, ...]
    conflict: tuple[str, ...]  # the paths that would conflict
    empty: bool
    # Of those, the paths an earlier predicted conflict's item also changes: a dry run cannot
    # apply that item, so these may only follow from it; ``after`` names those items.
    knock_on: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @property
    def knock_on_only(self) -> bool:
        """Every predicted conflict of the item may follow from an earlier one."""
        return bool(self.conflict) and set(self.conflict) <= set(self.knock_on)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "paths": list(self.paths),
            "translation_hits": self.translation_hits,
            "left_out": list(self.left_out),
            "conflict": list(self.conflict),
            "knock_on": list(self.knock_on),
            "after": list(self.after),
            "empty": self.empty,
        }


@dataclass
class CarryRun:
    """What one run of a carry (started, continued, skipped on) ends with: carried, skipped,
    planned (--dry-run) or stopped at."""

    status: CarryStatus
    base: str = ""
    tip: str = ""
    branch: str | None = None
    worktree: str | None = None
    carried: list[Carried] = field(default_factory=list)
    skipped: list[SkippedItem] = field(default_factory=list)
    conflict: CarryConflict | None = None
    planned: list[DryRunItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pin_commit: str | None = None


@dataclass(frozen=True)
class Aborted:
    """What ``--abort`` removed (None: nothing the carry made was left to remove)."""

    branch: str | None
    worktree: str | None
    notes: tuple[str, ...] = ()
