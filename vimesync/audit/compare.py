"""Classify every path a sync changed (baseline..head) against the upstream tip, and review state.

The core, :func:`classify`, is pure: tree listings and a ledger in, ``PathAudit`` records out.
:func:`run_audit` reads the three trees through ``vimesync.git`` and calls it.

Order of the checks for one path: deleted (absent at head) → excluded (its upstream counterpart
is under a policy-excluded path) → identical (same blob oid as the counterpart at the tip) →
translated-verified (the counterpart, translated as carry translates it, equals the head's file)
→ overlay (it does not: the residue is the overlay) → downstream-only (no counterpart).
Identical and translated-verified paths count as *verified*: equality with upstream is proven
(by the oid, or by the translation), so they need no ledger entry. An overlay needs a review of
its residue, found in this sync's ledger or an earlier sync's; every other path needs a review
recorded at its head content. Bookkeeping (:mod:`vimesync.audit.bookkeeping`: the ledgers
``sop/reviews/<sync>.toml`` and the evidence records ``sop/records/<sync>.toml``, exactly) is not
audited: committing a review must not make the audit ask for another. Any other file there is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.audit.bookkeeping import DEFAULT, NO_FILE, Bookkeeping
from vimesync.audit.model import (
    ABSENT,
    DELETED,
    DOWNSTREAM_ONLY,
    EXCLUDED,
    IDENTICAL,
    OVERLAY,
    RESOLVED,
    REVIEWED,
    STALE,
    TRANSLATED_VERIFIED,
    UNREVIEWED,
    VERIFIED,
    Ledger,
    PathAudit,
    Review,
)
from vimesync.audit.residue import Residue, residue
from vimesync.globs import GlobLists, PathGlobs
from vimesync.pathmap import PathMap
from vimesync.upstream.translate import Transform

NO_MAP = PathMap()


def excluded_matcher(globs: Iterable[Sequence[str]]) -> Callable[[str], bool]:
    """A predicate for "under an excluded path": some list of gitignore-style globs (``dir/``,
    ``**``, ``*.md``, ``!keep``; one list per exclude rule, its negations its own) matches the
    path. Surrogate-escaped (non-UTF-8) paths match too."""
    return GlobLists([PathGlobs(g) for g in globs]).any


def blobs(entries: Iterable[git.TreeEntry]) -> dict[str, tuple[int, str]]:
    return {e.path: (e.mode, e.oid) for e in entries if e.kind != "tree"}


def changed_paths(baseline: dict[str, tuple[int, str]], head: dict[str, tuple[int, str]]) -> list[str]:
    """Paths added, deleted, or changed in content or mode between two listings, sorted."""
    return sorted(p for p in baseline.keys() | head.keys() if baseline.get(p) != head.get(p))


def _review_state(path: str, head_oid: str, ledger: Ledger) -> tuple[str, Review | None]:
    review = ledger.get(path)
    if review is None:
        return UNREVIEWED, None
    return (REVIEWED if review.oid == head_oid else STALE), review


def _overlay_state(
    path: str, head_oid: str, key: str | None, ledger: Ledger, earlier: Sequence[Ledger]
) -> tuple[str, Review | None, str | None]:
    """An overlay's review: this sync's ledger first (a review of this residue, or of this very
    content when it recorded no residue), then the earlier syncs' (newest first) for one of this
    residue. (state, review, the earlier sync it came from)."""
    review = ledger.get(path)
    if review is not None and ((key is not None and review.residue == key) or review.oid == head_oid):
        return REVIEWED, review, None
    for old in reversed(earlier):
        found = old.get(path)
        if found is not None and key is not None and found.residue == key:
            return REVIEWED, found, old.sync
    if review is not None:
        return STALE, review, None
    for old in reversed(earlier):
        found = old.get(path)
        if found is not None:
            return STALE, found, old.sync
    return UNREVIEWED, None, None


@dataclass(frozen=True)
class Compared:
    """A path's upstream counterpart translated and compared with the head's file."""

    equal: bool  # the translation explains the whole difference
    rules: tuple[str, ...] = ()  # the translations that matched, described
    residue: Residue | None = None  # when not equal (None: nothing to read, e.g. a submodule)


@dataclass(frozen=True)
class Judging:
    """What a changed path is judged by besides the three listings: the path map, the excluded
    paths, this sync's ledger, the upstream base's listing, the translated comparisons, the
    earlier syncs' ledgers, the pin bump and where bookkeeping is (see :func:`classify`)."""

    path_map: PathMap = NO_MAP
    is_excluded: Callable[[str], bool] = lambda _p: False
    ledger: Ledger | None = None
    upstream_base: dict[str, tuple[int, str]] | None = None
    compared: Mapping[str, Compared] | None = None
    earlier: Sequence[Ledger] = ()
    pin_bump: str | None = None
    bookkeeping: Bookkeeping = DEFAULT
    resolved: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # path -> PRs ("#N")


def classify(
    baseline: dict[str, tuple[int, str]],
    head: dict[str, tuple[int, str]],
    upstream: dict[str, tuple[int, str]],
    judging: Judging | None = None,
) -> tuple[PathAudit, ...]:
    """Classify each path changed between ``baseline`` and ``head`` (path -> (mode, oid) listings).

    With the ``upstream_base`` listing, a deletion that mirrors an upstream deletion is verified.
    ``compared`` holds the translated comparison of the paths whose counterpart differs by oid
    (see :func:`compare_translated`); a path missing from it is an overlay without a residue.
    ``earlier`` are the ledgers of earlier syncs, where an overlay's review may be found.
    ``pin_bump`` names the upstream pin file when its only change is ``synced`` moved to the
    upstream tip (see :func:`is_pin_bump`): carry's own bump, verified. A ``resolved`` path (a
    conflict of the carry resolved by hand) is listed whether it changed or not, as *resolved*:
    reviewed only by a review of its head content in this sync's ledger.
    """
    j = judging or Judging()
    ledger = j.ledger or Ledger(sync="")
    compared = j.compared or {}
    path_map, is_excluded, upstream_base, pin_bump = j.path_map, j.is_excluded, j.upstream_base, j.pin_bump
    earlier = j.earlier
    out = []
    for path in sorted({*changed_paths(baseline, head), *j.resolved}):
        before, after = baseline.get(path, (NO_FILE, "")), head.get(path, (NO_FILE, ""))
        if j.bookkeeping.is_change(path, before[0], after[0]):
            # The review ledgers and the evidence records themselves: committing a review (or a
            # test record) must not call for a review.
            continue
        up_path = path_map.reverse(path)  # an unmapped path is its own counterpart
        up = upstream.get(up_path)
        up_oid = up[1] if up else None
        comparison: Compared | None = None
        if path not in head:
            cls, head_oid = DELETED, ABSENT
        else:
            head_oid = head[path][1]
            if is_excluded(up_path):
                cls = EXCLUDED
            elif up_oid == head_oid:
                cls = IDENTICAL
            elif up_oid is not None:
                comparison = compared.get(path, Compared(equal=False))
                cls = TRANSLATED_VERIFIED if comparison.equal else OVERLAY
            else:
                cls = DOWNSTREAM_ONLY
        if path in j.resolved:  # whatever it would be, the resolution is what needs a review
            cls = RESOLVED
            head_oid = head[path][1] if path in head else ABSENT
        mirrors_upstream_deletion = (
            cls == DELETED and upstream_base is not None and up_path in upstream_base and up_oid is None
        )
        found_in = None
        res = comparison.residue if comparison else None
        rules = comparison.rules if comparison else ()
        if cls in (IDENTICAL, TRANSLATED_VERIFIED) or mirrors_upstream_deletion:
            state, review = VERIFIED, ledger.get(path)
        elif path == pin_bump and cls == DOWNSTREAM_ONLY:
            state, review, rules = VERIFIED, ledger.get(path), (PIN_BUMP_RULE,)
        elif cls == OVERLAY:
            state, review, found_in = _overlay_state(
                path, head_oid, res.key if res else None, ledger, earlier
            )
        else:
            state, review = _review_state(path, head_oid, ledger)
        out.append(
            PathAudit(
                path=path,
                cls=cls,
                head_oid=head_oid,
                upstream_path=up_path,
                upstream_oid=up_oid,
                review=state,
                reviewed_by=review.by if review else None,
                reviewed_oid=review.oid if review else None,
                rules=rules,
                residue=res.key if res else None,
                residue_added=res.added if res else 0,
                residue_removed=res.removed if res else 0,
                residue_diff=res.diff if res else "",
                dropped_comments=res.dropped_comments if res else (),
                reviewed_residue=(review.residue or None) if review and cls == OVERLAY else None,
                reviewed_in=found_in,
                resolved_in=j.resolved.get(path, ()),
            )
        )
    return tuple(out)


PIN_BUMP_RULE = "the upstream pin's synced moved to the upstream tip, nothing else changed"
_SYNCED = re.compile(rb'^(\s*synced\s*=\s*)"([0-9A-Za-z][0-9A-Za-z._/~^-]{0,199})"(.*)$')


def is_pin_bump(base: bytes, head: bytes, resolve: Callable[[str], str | None], tip: str) -> bool:
    """Whether ``head`` (the upstream pin file at the head) is ``base`` (at the baseline) with its
    ``synced = "..."`` line, and nothing else, moved to a revision that ``resolve`` makes ``tip``."""
    old, new = base.split(b"\n"), head.split(b"\n")
    if len(old) != len(new):
        return False
    differ = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    if len(differ) != 1:
        return False
    was, now = _SYNCED.match(old[differ[0]]), _SYNCED.match(new[differ[0]])
    if was is None or now is None or (was[1], was[3]) != (now[1], now[3]):
        return False
    return resolve(now[2].decode("ascii")) == tip


def describe_rule(where: str, pattern: str, replace: str, matches: int) -> str:
    """``WHERE 'PATTERN' -> 'REPLACE' (N matches)``: one translation that explains a difference."""
    # As the config writes them (TOML literal strings), not Python reprs with doubled backslashes.
    return f"{where} '{pattern}' -> '{replace}' ({matches:,} {'match' if matches == 1 else 'matches'})"


_NO_TEXT = (0o160000,)  # a submodule: its "blob" is a commit id, nothing to translate


def compare_translated(
    downstream: Path,
    upstream: Path,
    head: dict[str, tuple[int, str]],
    upstream_tree: dict[str, tuple[int, str]],
    paths: Iterable[tuple[str, str]],  # (downstream path, upstream counterpart)
    transform: Transform,
) -> dict[str, Compared]:
    """For each path whose counterpart differs by oid: the counterpart at the tip translated by
    ``transform`` (its translations; the path is already mapped) and compared with the head's
    file. Blobs are read through one ``git cat-file --batch`` per repository."""
    todo = [
        (p, u)
        for p, u in paths
        if p in head
        and u in upstream_tree
        and head[p][0] not in _NO_TEXT
        and upstream_tree[u][0] not in _NO_TEXT
    ]
    if not todo:
        return {}
    up_oids = sorted({upstream_tree[u][1] for _p, u in todo})
    down_oids = sorted({head[p][1] for p, _u in todo})
    up_data = dict(git.cat_blobs(upstream, up_oids))
    down_data = dict(git.cat_blobs(downstream, down_oids))
    out: dict[str, Compared] = {}
    for path, up_path in todo:
        mode, oid = upstream_tree[up_path]
        translated, used = transform.explain(path, up_data[oid], mode)
        rules = tuple(describe_rule(t.where, t.spec.pattern, t.spec.replace, n) for t, n in used)
        mine = down_data[head[path][1]]
        if translated == mine and head[path][0] == mode:
            out[path] = Compared(equal=True, rules=rules)
        else:
            out[path] = Compared(equal=False, rules=rules, residue=residue(path, translated, mine))
    return out
