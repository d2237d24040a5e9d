"""What a maintainer's resolution of a carry's conflict did to the upstream change: the model of a
replay (:mod:`vimesync.carry.replay`) and its pure comparisons.

A carried item's commit is *resolved* at a path when the in-memory merge of its upstream change
onto the commit's parent conflicted there, or when the committed file is not what the clean merge
gives (an edit made during ``--continue``, at a path the upstream change touched or not). What
the resolution dropped is counted in lines: the upstream side's added lines (post-image against
pre-image, as multisets) that the committed file does not hold. Commit-message trailers
(``Carry-Resolved:``) are never read for it: anyone who edits a message could remove them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from vimesync.text import visible

MAX_LINES = 20  # dropped lines kept per file (the count is kept whole)
MAX_LINE = 200  # characters of a kept line
MAX_COMPARED = 1 << 20  # bytes of each side compared line by line; larger: counted as a file only
MAX_FILES = 20  # files per item whose lines are compared (every resolved path is still listed)

CONFLICT = "conflict"  # prefix of a merge conflict's ``why`` ("conflict: content")
EDITED = "edited"  # the upstream change touched it and the clean merge gives another file
EDITED_OUTSIDE = "edited outside the upstream change"  # a file the upstream change did not touch


@dataclass(frozen=True)
class ResolvedFile:
    """One resolved path of a carried item, and the upstream lines its resolution does not hold."""

    path: str  # downstream path
    why: str  # "conflict: content", "conflict: modify/delete", EDITED, EDITED_OUTSIDE
    dropped: tuple[str, ...] = ()  # upstream added lines the committed file lacks (capped)
    dropped_count: int = 0  # all of them
    added_count: int = 0  # the upstream side's added lines
    note: str = ""  # what lines cannot say: "binary", "too large to compare", "kept: upstream deleted it"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "why": self.why,
            "dropped": list(self.dropped),
            "dropped_count": self.dropped_count,
            "added_count": self.added_count,
            "note": self.note or None,
        }


@dataclass(frozen=True)
class Resolution:
    """A carried item whose commit holds resolved paths."""

    pr: int | None
    title: str
    upstream_commit: str
    commit: str  # the downstream commit that carries it
    files: tuple[ResolvedFile, ...]  # sorted by path

    @property
    def label(self) -> str:
        return f"#{self.pr}" if self.pr is not None else self.upstream_commit[:12]

    def to_json(self) -> dict[str, object]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "commit": self.commit,
            "files": [f.to_json() for f in self.files],
        }


@dataclass(frozen=True)
class Resolutions:
    """The replay of a sync's carried items: those with resolved paths, how many were replayed,
    and what the replay could not do (over its bounds, an item whose commit was not found)."""

    items: tuple[Resolution, ...] = ()
    replayed: int = 0
    notes: tuple[str, ...] = ()

    def paths(self) -> dict[str, tuple[str, ...]]:
        """Every resolved downstream path -> the items (``#N``) that resolved it, in order."""
        out: dict[str, list[str]] = {}
        for r in self.items:
            for f in r.files:
                out.setdefault(f.path, []).append(r.label)
        return {p: tuple(dict.fromkeys(labels)) for p, labels in out.items()}

    def of_pr(self, number: int) -> Resolution | None:
        return next((r for r in self.items if r.pr == number), None)

    def to_json(self) -> dict[str, object]:
        return {
            "replayed": self.replayed,
            "items": [r.to_json() for r in self.items],
            "notes": list(self.notes),
        }


def shown(line: bytes) -> str:
    """One line of a file as text a report can carry: decoded (bad bytes replaced), control
    characters escaped, cut at MAX_LINE characters."""
    text = visible(line.decode("utf-8", "replace").rstrip("\r"))
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + "…"


def dropped_lines(base: bytes, theirs: bytes, committed: bytes) -> tuple[tuple[str, ...], int, int]:
    """(the upstream added lines ``committed`` lacks, shown and capped; how many it lacks; how
    many the upstream added): ``theirs`` against ``base`` as multisets of lines, in ``theirs``'s
    order. Linear: no line matching that a hostile file could make quadratic."""
    left = Counter(_lines(base))
    have = Counter(_lines(committed))
    kept: list[str] = []
    added = missing = 0
    for line in _lines(theirs):
        if left[line] > 0:
            left[line] -= 1
            continue
        added += 1
        if have[line] > 0:
            have[line] -= 1
            continue
        missing += 1
        if len(kept) < MAX_LINES:
            kept.append(shown(line))
    return tuple(kept), missing, added


def _lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: LF-separated, the empty tail after a final newline not one."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def differing(
    touched: Mapping[str, object], expected: Mapping[str, object], committed: Mapping[str, object]
) -> list[str]:
    """The paths of ``touched`` where the clean merge (``expected``: path -> entry, a missing path
    is absent) and the commit (``committed``) hold different entries, sorted."""
    return sorted(p for p in touched if expected.get(p) != committed.get(p))
