"""The audit of a sync, read through git: the three trees listed, the ledgers read, every changed
path classified (:mod:`vimesync.audit.compare`, pure) and the ``[[upstream.verify]]`` rules
checked; and reviews of paths at their head content, for the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.audit.bookkeeping import DEFAULT, Bookkeeping
from vimesync.audit.compare import (
    Judging,
    blobs,
    changed_paths,
    classify,
    compare_translated,
    excluded_matcher,
    is_pin_bump,
)
from vimesync.audit.ledger import earlier_ledgers, ledger_relpath, read_ledger
from vimesync.audit.model import ABSENT, DELETED, AuditResult, Review
from vimesync.audit.verify import VerifyRule, Violation, check_rules
from vimesync.errors import BadInput
from vimesync.pathmap import PathMap
from vimesync.readers import WORKTREE, Reader
from vimesync.upstream.translate import Transform


def load_excluded_globs(policy: Path | None, reader: Reader = WORKTREE) -> tuple[tuple[str, ...], ...]:
    """The ``paths`` globs of each ``exclude`` rule of the policy (``vimesync.upstream.policy``),
    as ``reader`` holds it."""
    if policy is None:
        return ()
    from vimesync.upstream.policy import load_policy

    return tuple(r.paths for r in load_policy(policy, reader).rules if r.action == "exclude" and r.paths)


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


@dataclass(frozen=True)
class AuditInputs:
    """One audit, every value resolved: the downstream's ``baseline..head`` against
    ``upstream_tip`` of ``upstream``, the ledger's name, and what the paths are judged by."""

    downstream: Path
    baseline: str
    head: str
    upstream: Path
    upstream_tip: str
    sync: str
    path_map: Sequence[tuple[str, str]] = ()  # (upstream, downstream) pairs, as config.parse_map
    excluded_globs: Iterable[Sequence[str]] = ()  # one list per exclude rule
    ledger_root: Path | None = None
    upstream_base: str | None = None
    upstream_pin: str | None = None
    bookkeeping: Bookkeeping = DEFAULT  # vimesync's own files, not audited
    transform: Transform | None = None
    verify: Sequence[VerifyRule] = ()
    resolved: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # path -> the PRs ("#N")


def run_audit(inputs: AuditInputs) -> AuditResult:
    """Audit ``baseline..head`` of ``downstream`` against ``upstream_tip`` of ``upstream``.

    The ledger is read from ``<ledger_root or downstream>/sop/reviews/<sync>.toml`` (the work
    tree, so reviews count before they are committed), and the earlier syncs' ledgers beside it.
    ``upstream_base``, when it resolves, lets deletions that mirror upstream deletions count as
    verified. ``transform`` holds the translations carry applies (its path map is not used:
    ``path_map`` is); without it, a path that differs from its counterpart is an overlay whose
    residue is the whole difference. ``verify`` rules are checked on the head's changed files.
    ``upstream_pin`` (the pin file's path in the downstream): a change that only moves its
    ``synced`` to the upstream tip is carry's pin bump, verified. ``resolved`` paths (a conflict
    of the carry resolved by hand, :mod:`vimesync.app.resolved`) are audited whether they changed
    or not: each needs a review of its head content.
    """
    i = inputs
    downstream, upstream, sync, upstream_base = i.downstream, i.upstream, i.sync, i.upstream_base
    pm = PathMap.of(i.path_map)  # BadInput for an empty side (maps built in code, not only parsed ones)
    base_sha, head_sha = check_baseline(downstream, i.baseline, i.head)
    tip_sha = git.resolve(upstream, i.upstream_tip)
    base_tree = None
    if upstream_base is not None:
        try:
            upstream_base = git.resolve(upstream, upstream_base)
            base_tree = blobs(git.ls_tree(upstream, upstream_base))
        except git.GitError:
            upstream_base = None
    rel = ledger_relpath(sync)
    root = i.ledger_root or downstream
    ledger = read_ledger(root / rel, sync)
    base_blobs = blobs(git.ls_tree(downstream, base_sha))
    head_blobs = blobs(git.ls_tree(downstream, head_sha))
    tip_blobs = blobs(git.ls_tree(upstream, tip_sha))
    is_excluded = excluded_matcher(i.excluded_globs)
    changed = changed_paths(base_blobs, head_blobs)
    differing = []
    for path in changed:
        up_path = pm.reverse(path)
        up = tip_blobs.get(up_path)
        if (
            path in head_blobs
            and up is not None
            and up[1] != head_blobs[path][1]
            and not is_excluded(up_path)
        ):
            differing.append((path, up_path))
    compared = compare_translated(
        downstream, upstream, head_blobs, tip_blobs, differing, i.transform or Transform()
    )
    pin_bump = _pin_bump(i, base_blobs, head_blobs, tip_sha)
    judging = Judging(
        path_map=pm,
        is_excluded=is_excluded,
        ledger=ledger,
        upstream_base=base_tree,
        compared=compared,
        earlier=earlier_ledgers(root, sync),
        pin_bump=pin_bump,
        bookkeeping=i.bookkeeping,
        resolved=i.resolved,
    )
    paths = classify(base_blobs, head_blobs, tip_blobs, judging)
    violations: tuple[Violation, ...] = ()
    if i.verify:
        checked = [p.path for p in paths if p.cls != DELETED]
        violations = check_rules(downstream, head_blobs, checked, i.verify)
    return AuditResult(
        baseline=base_sha,
        head=head_sha,
        upstream_tip=tip_sha,
        sync=sync,
        ledger_path=rel,
        paths=paths,
        path_map=pm.pairs,
        upstream_base=upstream_base,
        violations=violations,
    )


def _pin_bump(
    i: AuditInputs,
    base_blobs: dict[str, tuple[int, str]],
    head_blobs: dict[str, tuple[int, str]],
    tip_sha: str,
) -> str | None:
    """The upstream pin's path when the sync only moved its ``synced`` to the tip: carry's bump."""
    upstream_pin = i.upstream_pin
    pin_bump = None
    if upstream_pin is not None and upstream_pin in base_blobs and upstream_pin in head_blobs:
        oids = [base_blobs[upstream_pin][1], head_blobs[upstream_pin][1]]
        if oids[0] != oids[1]:
            old, new = (data for _oid, data in git.cat_blobs(i.downstream, oids))

            def resolve(rev: str) -> str | None:
                try:
                    return git.resolve(i.upstream, rev)
                except git.GitError:
                    return None

            if is_pin_bump(old, new, resolve, tip_sha):
                pin_bump = upstream_pin
    return pin_bump


def reviews_for(
    downstream: Path,
    targets: Sequence[str],
    *,
    by: str,
    at: str,
    head: str = "HEAD",
    baseline: str | None = None,
    also: Iterable[str] = (),
) -> list[Review]:
    """Reviews of ``targets`` (files, or folders meaning every file under them) at ``head`` content.

    With ``baseline``, folders expand only to paths changed since it and to ``also`` (the paths
    the audit lists unchanged: resolved during the carry), and a path deleted since it is
    reviewed as a deletion. A target matching nothing is BadInput (a typo must not pass silently).
    """
    if not by.strip():
        raise BadInput("--by must name the reviewer")
    head_blobs = blobs(git.ls_tree(downstream, git.resolve(downstream, head)))
    candidates = dict(head_blobs)
    if baseline is not None:
        base_sha, _ = check_baseline(downstream, baseline, head)
        base_blobs = blobs(git.ls_tree(downstream, base_sha))
        changed = set(changed_paths(base_blobs, head_blobs)) | set(also)
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
