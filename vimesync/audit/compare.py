"""Classify every path a sync changed (baseline..head) against the upstream tip, and review state.

The core, :func:`classify`, is pure: tree listings and a ledger in, ``PathAudit`` records out.
:func:`run_audit` reads the three trees through ``vimesync.git`` and calls it.

Order of the checks for one path: deleted (absent at head) → excluded (its upstream counterpart
is under a policy-excluded path) → identical (same blob oid as the counterpart at the tip) →
translated (counterpart exists, differs) → downstream-only (no counterpart).
Identical paths count as *verified*: equality with upstream is proven by the oid, so they need
no ledger entry. Every other path needs a review recorded at its head content. The ledgers
(``sop/reviews/``) and the evidence records (``sop/records/``) are not audited: committing a review
must not make the audit ask for another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from vimesync import git
from vimesync.audit.ledger import LEDGER_DIR, ledger_relpath, read_ledger
from vimesync.audit.model import (
    ABSENT,
    DELETED,
    DOWNSTREAM_ONLY,
    EXCLUDED,
    IDENTICAL,
    REVIEWED,
    STALE,
    TRANSLATED,
    UNREVIEWED,
    VERIFIED,
    AuditResult,
    Ledger,
    PathAudit,
    Review,
)
from vimesync.errors import BadInput
from vimesync.globs import GlobLists, PathGlobs
from vimesync.pathmap import PathMap

NO_MAP = PathMap()

RECORDS_DIR = "sop/records"  # vimesync.sop.records.RECORDS: the evidence, not audited


def excluded_matcher(globs: Iterable[Sequence[str]]) -> Callable[[str], bool]:
    """A predicate for "under an excluded path": some list of gitignore-style globs (``dir/``,
    ``**``, ``*.md``, ``!keep``; one list per exclude rule, its negations its own) matches the
    path. Surrogate-escaped (non-UTF-8) paths match too."""
    return GlobLists([PathGlobs(g) for g in globs]).any


def load_excluded_globs(policy: Path | None) -> tuple[tuple[str, ...], ...]:
    """The ``paths`` globs of each ``exclude`` rule of the policy (``vimesync.upstream.policy``)."""
    if policy is None:
        return ()
    from vimesync.upstream.policy import load_policy

    return tuple(r.paths for r in load_policy(policy).rules if r.action == "exclude" and r.paths)


def check_baseline(downstream: Path, baseline: str, head: str) -> tuple[str, str]:
    """Resolve ``baseline`` and ``head`` of ``downstream``: (baseline sha, head sha).

    BadInput unless the baseline is the head or an ancestor of it: the audit compares the
    pre-sync commit with the sync head, and any other pair would audit someone else's changes.
    """
    base_sha = git.resolve(downstream, baseline)
    head_sha = git.resolve(downstream, head)
    if base_sha == head_sha or git.is_ancestor(downstream, base_sha, head_sha):
        return base_sha, head_sha
    where = f"--baseline {baseline} ({base_sha[:12]})", f"--head {head} ({head_sha[:12]})"
    if git.is_ancestor(downstream, head_sha, base_sha):
        raise BadInput(
            f"{where[1]} is an ancestor of {where[0]}: the range is reversed; "
            f"did you mean --baseline {head} --head {baseline}?",
            hint="--baseline is the downstream commit before the sync, --head the sync's (newer) commit",
        )
    raise BadInput(
        f"{where[0]} is not an ancestor of {where[1]}: the head's history does not contain the baseline, "
        "so their difference is not what the sync changed",
        hint="use the commit the sync branch started from as --baseline (git merge-base MAIN SYNC-HEAD)",
    )


def default_sync_name(upstream_base: str | None, upstream_tip: str) -> str:
    """``4c193f1f..8c17b676`` from the upstream range, or the tip alone when the base is unknown."""
    return f"{upstream_base[:8]}..{upstream_tip[:8]}" if upstream_base else upstream_tip[:8]


def _blobs(entries: Iterable[git.TreeEntry]) -> dict[str, tuple[int, str]]:
    return {e.path: (e.mode, e.oid) for e in entries if e.kind != "tree"}


def changed_paths(baseline: dict[str, tuple[int, str]], head: dict[str, tuple[int, str]]) -> list[str]:
    """Paths added, deleted, or changed in content or mode between two listings, sorted."""
    return sorted(p for p in baseline.keys() | head.keys() if baseline.get(p) != head.get(p))


def _review_state(path: str, head_oid: str, ledger: Ledger) -> tuple[str, Review | None]:
    review = ledger.get(path)
    if review is None:
        return UNREVIEWED, None
    return (REVIEWED if review.oid == head_oid else STALE), review


def classify(
    baseline: dict[str, tuple[int, str]],
    head: dict[str, tuple[int, str]],
    upstream: dict[str, tuple[int, str]],
    *,
    path_map: PathMap = NO_MAP,
    is_excluded: Callable[[str], bool] = lambda _p: False,
    ledger: Ledger | None = None,
    upstream_base: dict[str, tuple[int, str]] | None = None,
) -> tuple[PathAudit, ...]:
    """Classify each path changed between ``baseline`` and ``head`` (path -> (mode, oid) listings).

    With the ``upstream_base`` listing, a deletion that mirrors an upstream deletion is verified.
    """
    ledger = ledger or Ledger(sync="")
    out = []
    for path in changed_paths(baseline, head):
        if path.startswith((LEDGER_DIR + "/", RECORDS_DIR + "/")):
            # The review ledgers and the evidence records themselves: committing a review (or a
            # test record) must not call for a review.
            continue
        up_path = path_map.reverse(path)  # an unmapped path is its own counterpart
        up = upstream.get(up_path)
        up_oid = up[1] if up else None
        if path not in head:
            cls, head_oid = DELETED, ABSENT
        else:
            head_oid = head[path][1]
            if is_excluded(up_path):
                cls = EXCLUDED
            elif up_oid == head_oid:
                cls = IDENTICAL
            elif up_oid is not None:
                cls = TRANSLATED
            else:
                cls = DOWNSTREAM_ONLY
        mirrors_upstream_deletion = (
            cls == DELETED and upstream_base is not None and up_path in upstream_base and up_oid is None
        )
        if cls == IDENTICAL or mirrors_upstream_deletion:
            state, review = VERIFIED, ledger.get(path)
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
            )
        )
    return tuple(out)


def run_audit(
    downstream: Path,
    baseline: str,
    head: str,
    upstream: Path,
    upstream_tip: str,
    *,
    sync: str,
    path_map: Sequence[tuple[str, str]] = (),  # (upstream, downstream) pairs, as config.parse_map
    excluded_globs: Iterable[Sequence[str]] = (),  # one list per exclude rule
    ledger_root: Path | None = None,
    upstream_base: str | None = None,
) -> AuditResult:
    """Audit ``baseline..head`` of ``downstream`` against ``upstream_tip`` of ``upstream``.

    The ledger is read from ``<ledger_root or downstream>/sop/reviews/<sync>.toml`` (the work
    tree, so reviews count before they are committed). ``upstream_base``, when it resolves,
    lets deletions that mirror upstream deletions count as verified.
    """
    pm = PathMap.of(path_map)  # BadInput for an empty side (maps built in code, not only parsed ones)
    base_sha, head_sha = check_baseline(downstream, baseline, head)
    tip_sha = git.resolve(upstream, upstream_tip)
    base_tree = None
    if upstream_base is not None:
        try:
            upstream_base = git.resolve(upstream, upstream_base)
            base_tree = _blobs(git.ls_tree(upstream, upstream_base))
        except git.GitError:
            upstream_base = None
    rel = ledger_relpath(sync)
    ledger = read_ledger((ledger_root or downstream) / rel, sync)
    paths = classify(
        _blobs(git.ls_tree(downstream, base_sha)),
        _blobs(git.ls_tree(downstream, head_sha)),
        _blobs(git.ls_tree(upstream, tip_sha)),
        path_map=pm,
        is_excluded=excluded_matcher(excluded_globs),
        ledger=ledger,
        upstream_base=base_tree,
    )
    return AuditResult(
        baseline=base_sha,
        head=head_sha,
        upstream_tip=tip_sha,
        sync=sync,
        ledger_path=rel,
        paths=paths,
        path_map=pm.pairs,
        upstream_base=upstream_base,
    )


def reviews_for(
    downstream: Path,
    targets: Sequence[str],
    *,
    by: str,
    at: str,
    head: str = "HEAD",
    baseline: str | None = None,
) -> list[Review]:
    """Reviews of ``targets`` (files, or folders meaning every file under them) at ``head`` content.

    With ``baseline``, folders expand only to paths changed since it, and a path deleted since it
    is reviewed as a deletion. A target matching nothing is BadInput (a typo must not pass silently).
    """
    if not by.strip():
        raise BadInput("--by must name the reviewer")
    head_blobs = _blobs(git.ls_tree(downstream, git.resolve(downstream, head)))
    candidates = dict(head_blobs)
    if baseline is not None:
        base_sha, _ = check_baseline(downstream, baseline, head)
        base_blobs = _blobs(git.ls_tree(downstream, base_sha))
        changed = set(changed_paths(base_blobs, head_blobs))
        candidates = {p: head_blobs.get(p, (0, ABSENT)) for p in changed}
    reviews: dict[str, Review] = {}
    for target in targets:
        norm = target.strip("/") if target not in ("", ".", "./") else ""
        hits = [p for p in candidates if not norm or p == norm or p.startswith(norm + "/")]
        if not hits:
            where = "changed since the baseline" if baseline else f"at {head}"
            raise BadInput(f"{target}: no such path {where}")
        for p in hits:
            reviews[p] = Review(path=p, oid=candidates[p][1], by=by, at=at)
    return [reviews[p] for p in sorted(reviews)]
