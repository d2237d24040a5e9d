"""The data model of a changed-path audit: every path a sync changed, classified and reviewed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from vimesync.git import NULL_SHA

# Classes, in the order reports list them.
IDENTICAL = "identical"  # same blob as the upstream counterpart at the upstream tip
# The upstream counterpart, translated (path map + [[upstream.translate]], as carry does), equals
# the head's file: the translation explains every difference; verified, like identical.
TRANSLATED_VERIFIED = "translated-verified"
# The counterpart exists and its translation differs from the head's file: a Vime-native overlay
# on top of the translation. Its residue (translated upstream -> head) is what a review covers.
OVERLAY = "overlay"
DOWNSTREAM_ONLY = "downstream-only"  # no upstream counterpart: the fork's own file
DELETED = "deleted"  # present at the baseline, absent at the head
EXCLUDED = "excluded"  # the upstream counterpart lies under a path the policy excludes
# A conflict of the carry resolved by hand (or a file edited during --continue): whatever else it
# is, what the resolution kept or dropped of the upstream change needs a review of its head content.
RESOLVED = "resolved"
CLASSES = (IDENTICAL, TRANSLATED_VERIFIED, OVERLAY, DOWNSTREAM_ONLY, DELETED, EXCLUDED, RESOLVED)

# Review states.
REVIEWED = "reviewed"  # the ledger records a review of exactly the head content (an overlay: of
# exactly its residue, in this sync's ledger or an earlier one)
VERIFIED = "verified"  # proven, no human review needed: identical paths (blob oids), paths the
# translation explains, and deletions of paths upstream deleted in the same range
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
    residue: str = ""  # an overlay's residue key (audit.residue): the review holds while it does


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
    # translated-verified: the translations that explain the difference ("vimesync.toml:9
    # PATTERN -> REPLACE (3 matches)"); an overlay: those that applied before the residue.
    rules: tuple[str, ...] = ()
    residue: str | None = None  # an overlay's residue key (None: no upstream text to compare)
    residue_added: int = 0  # lines of residue: +added
    residue_removed: int = 0  # and -removed
    residue_diff: str = ""  # the residue as a unified diff, capped (audit.residue.MAX_RESIDUE_SHOWN)
    dropped_comments: tuple[str, ...] = ()  # upstream comment/docstring lines the overlay lost
    reviewed_residue: str | None = None  # the residue key the review recorded
    reviewed_in: str | None = None  # the earlier sync whose ledger holds the review, when not this one
    resolved_in: tuple[str, ...] = ()  # resolved: the carried PRs ("#N") whose conflict it was

    @property
    def ok(self) -> bool:
        return self.review in (REVIEWED, VERIFIED)


@dataclass(frozen=True)
class Violation:
    """A ``[[upstream.verify]]`` rule broken at the head: ``path`` (``line``, 0 for the whole file)."""

    path: str
    line: int
    where: str  # the rule: "vimesync.toml:14"
    pattern: str
    must: str  # "not-match" (the pattern matched here) or "match" (it matched nowhere in the file)
    text: str = ""  # the matching line, capped


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
    violations: tuple[Violation, ...] = ()  # [[upstream.verify]] rules broken at the head

    def relative_to(self, root: Path) -> AuditResult:
        """The config's files its translations and verification findings name (``<file>:<line>``)
        given relative to ``root`` when inside it: ``vimesync.toml:9``, as a PR description says it."""
        prefix = f"{root}/"

        def named(text: str) -> str:
            return text[len(prefix) :] if text.startswith(prefix) else text

        paths = tuple(
            replace(p, rules=tuple(named(r) for r in p.rules)) if p.rules else p for p in self.paths
        )
        violations = tuple(replace(v, where=named(v.where)) for v in self.violations)
        return replace(self, paths=paths, violations=violations)

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
    def overlays(self) -> list[PathAudit]:
        return [p for p in self.paths if p.cls == OVERLAY]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.paths) and not self.violations
