"""What a carry reports: :class:`Result` (carried, skipped, the conflict), and its entries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vimesync.carry.merge import Conflict
from vimesync.carry.plan import Item
from vimesync.carry.state import State

EMPTY = "already in the downstream (empty after the merge)"
EMPTY_RESOLVED = "empty after the conflict was resolved"
SKIPPED = "skipped at a conflict (--skip)"


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


def conflict_doc(item: Item, conflicts: Sequence[Conflict]) -> dict[str, Any]:
    """The ``conflict`` of a Result: the item and each conflicting file (why, which hunks)."""
    return {
        "pr": item.pr,
        "title": item.title,
        "upstream_commit": item.upstream_commit,
        "files": [
            {"path": c.path, "why": c.why, "hunks": list(c.hunks), **({"hint": c.hint} if c.hint else {})}
            for c in conflicts
        ],
    }


def skip_entry(item: Item, reason: str) -> dict[str, Any]:
    """One ``skipped`` entry of a Result: the item and why."""
    return {"pr": item.pr, "title": item.title, "reason": reason, "upstream_commit": item.upstream_commit}


def result_of(state: State, status: str) -> Result:
    """The Result of the carry ``state`` describes, with ``status``."""
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
