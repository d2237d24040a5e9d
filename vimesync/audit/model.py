"""The data model of a changed-path audit: every path a sync changed, classified and reviewed."""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.git import NULL_SHA

# Classes, in the order reports list them.
IDENTICAL = "identical"  # same blob as the upstream counterpart at the upstream tip
TRANSLATED = "translated"  # has an upstream counterpart, content differs
DOWNSTREAM_ONLY = "downstream-only"  # no upstream counterpart: the fork's own overlay
DELETED = "deleted"  # present at the baseline, absent at the head
EXCLUDED = "excluded"  # the upstream counterpart lies under a path the policy excludes
CLASSES = (IDENTICAL, TRANSLATED, DOWNSTREAM_ONLY, DELETED, EXCLUDED)

# Review states.
REVIEWED = "reviewed"  # the ledger records a review of exactly the head content
VERIFIED = "verified"  # proven by blob oids, no human review needed: identical paths, and deletions
# of paths upstream deleted in the same range (present at the upstream base, absent at the tip)
UNREVIEWED = "unreviewed"  # no review recorded
STALE = "stale"  # reviewed, but the content changed since

ABSENT = NULL_SHA  # the content hash recorded for a deleted path


@dataclass(frozen=True)
class Review:
    """One ledger entry: ``by`` reviewed ``path`` when its content (blob oid at the head) was ``oid``."""

    path: str
    oid: str  # blob oid reviewed; ABSENT for a deletion
    by: str
    at: str = ""  # ISO 8601 UTC timestamp


@dataclass(frozen=True)
class Ledger:
    sync: str  # the sync's name, e.g. "4c193f1f..8c17b676"
    reviews: tuple[Review, ...] = ()  # sorted by path, at most one per path

    def get(self, path: str) -> Review | None:
        for r in self.reviews:
            if r.path == path:
                return r
        return None


@dataclass(frozen=True)
class PathAudit:
    path: str  # downstream path
    cls: str  # one of CLASSES
    head_oid: str  # blob oid at the head; ABSENT when deleted
    upstream_path: str | None = None  # the counterpart looked up at the upstream tip (after mapping)
    upstream_oid: str | None = None  # its blob oid there, None when it has none
    review: str = UNREVIEWED  # REVIEWED | VERIFIED | UNREVIEWED | STALE
    reviewed_by: str | None = None
    reviewed_oid: str | None = None

    @property
    def ok(self) -> bool:
        return self.review in (REVIEWED, VERIFIED)


@dataclass(frozen=True)
class AuditResult:
    baseline: str  # full sha (downstream, pre-sync)
    head: str  # full sha (downstream, sync head)
    upstream_tip: str  # full sha
    sync: str  # ledger name
    ledger_path: str  # relative to the downstream root, "sop/reviews/<sync>.toml"
    paths: tuple[PathAudit, ...]  # sorted by path
    path_map: tuple[tuple[str, str], ...] = ()
    upstream_base: str | None = None  # full sha, when known: deletions upstream made too are verified

    def counts(self) -> dict[str, int]:
        """Paths per class, every class present (zero when empty), in CLASSES order."""
        counts = dict.fromkeys(CLASSES, 0)
        for p in self.paths:
            counts[p.cls] += 1
        return counts

    @property
    def unreviewed(self) -> list[PathAudit]:
        return [p for p in self.paths if p.review == UNREVIEWED]

    @property
    def stale(self) -> list[PathAudit]:
        return [p for p in self.paths if p.review == STALE]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.paths)
