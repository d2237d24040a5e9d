"""Attribution (pure): first-parent commits grouped into merged PRs and direct commits, the side
commits each merge brought in, and reverts linked to the PR they revert.

- ``Merge pull request #N from …`` (any merge naming a PR) is PR N and owns ``M^1..M``,
  including merges of a fork's own PRs it carries (those are not upstream PRs);
- a subject ending in ``(#N)`` is PR N (squash; several such commits are one rebase-merged PR);
- anything else is a direct commit.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from vimesync.upstream.logparse import FirstParent
from vimesync.upstream.messages import MERGE_PR_RE, pr_number, pr_title, revert_target, split_suffix
from vimesync.upstream.model import Commit, DirectCommit, PrKind, PullRequest

_T = TypeVar("_T", PullRequest, DirectCommit)


def owned_side_commits(
    first_parents: list[FirstParent], graph: dict[str, tuple[str, ...]], order: dict[str, int]
) -> dict[str, tuple[str, ...]]:
    """For each first-parent merge, the range commits it brought in (``M^1..M`` minus M), oldest first.

    ``graph`` maps every commit of the range to its parents. Walking oldest first, whatever the
    earlier first-parent commits reached is claimed; a merge owns what its other parents reach
    inside the range that is not claimed yet (exactly ``M^1..M`` restricted to the range).
    """
    claimed: set[str] = set()
    owned: dict[str, tuple[str, ...]] = {}
    for fp in first_parents:
        c = fp.commit
        claimed.add(c.sha)
        if len(c.parents) < 2:
            continue
        found: list[str] = []
        stack = [p for p in c.parents[1:] if p in graph and p not in claimed]
        while stack:
            sha = stack.pop()
            if sha in claimed:
                continue
            claimed.add(sha)
            found.append(sha)
            stack.extend(p for p in graph[sha] if p in graph and p not in claimed)
        owned[c.sha] = tuple(sorted(found, key=lambda s: order.get(s, 0)))
    return owned


def attribute(
    first_parents: list[FirstParent],
    owned: dict[str, tuple[str, ...]],
    outside: Callable[[str], str | None] | None = None,
) -> tuple[list[PullRequest], list[DirectCommit]]:
    """Group first-parent commits (oldest first) into PRs and direct commits; link reverts.

    ``outside(sha)`` gives the subject of a reverted commit that is not in the range, if known.
    """
    groups: dict[int, list[FirstParent]] = {}
    direct: list[FirstParent] = []
    for fp in first_parents:
        n = pr_number(fp.commit)
        if n is None:
            direct.append(fp)
        else:
            groups.setdefault(n, []).append(fp)

    prs: list[PullRequest] = []
    for n, fps in groups.items():
        commits: list[str] = []
        paths: set[str] = set()
        for fp in fps:
            commits.extend(owned.get(fp.commit.sha, ()))
            commits.append(fp.commit.sha)
            paths.update(fp.paths)
        is_merge = any(len(fp.commit.parents) > 1 for fp in fps)
        kind = PrKind.MERGE if is_merge else (PrKind.SQUASH if len(fps) == 1 else PrKind.REBASE)
        prs.append(
            PullRequest(
                number=n,
                title=pr_title(fps[0].commit),
                commits=tuple(commits),
                paths=tuple(sorted(paths)),
                merge_commit=fps[-1].commit.sha,
                kind=kind,
                author=fps[-1].commit.author,
            )
        )
    position = {fp.commit.sha: i for i, fp in enumerate(first_parents)}
    prs.sort(key=lambda p: position[p.merge_commit])
    directs = [
        DirectCommit(
            sha=fp.commit.sha,
            title=fp.commit.subject,
            paths=fp.paths,
            side_commits=owned.get(fp.commit.sha, ()),
        )
        for fp in direct
    ]
    return _link_reverts(first_parents, prs, directs, outside)


def _prefixed(sorted_keys: list[str], values: dict[str, int], prefix: str) -> set[int | None]:
    """The values of the keys starting with ``prefix``, up to two (the caller wants one or none):
    a bisection, so many reverts of abbreviated shas never each scan every commit of the range."""
    found: set[int | None] = set()
    i = bisect.bisect_left(sorted_keys, prefix)
    while i < len(sorted_keys) and sorted_keys[i].startswith(prefix) and len(found) < 2:
        found.add(values[sorted_keys[i]])
        i += 1
    return found


def _link_reverts(
    first_parents: list[FirstParent],
    prs: list[PullRequest],
    directs: list[DirectCommit],
    outside: Callable[[str], str | None] | None,
) -> tuple[list[PullRequest], list[DirectCommit]]:
    by_sha: dict[str, int] = {}
    by_title: dict[str, list[tuple[int, int]]] = {}  # title -> [(first-parent position, PR)]
    position = {fp.commit.sha: i for i, fp in enumerate(first_parents)}
    for pr in prs:
        for sha in pr.commits:
            by_sha[sha] = pr.number
        by_title.setdefault(pr.title, []).append((position[pr.merge_commit], pr.number))
    commit_of = {fp.commit.sha: fp.commit for fp in first_parents}
    sorted_shas = sorted(by_sha)

    def find(commit: Commit, own: int | None) -> int | None:
        sha, subject = revert_target(commit)
        if sha:
            hits = _prefixed(sorted_shas, by_sha, sha) if len(sha) < 40 else {by_sha.get(sha)}
            hits.discard(None)
            if len(hits) == 1:
                return hits.pop()
            if not hits and outside is not None:  # reverts something before BASE: ask git
                before = outside(sha)
                n = pr_number(Commit(sha=sha, parents=(), subject=before)) if before else None
                if n is not None and n != own:
                    return n
        if subject is None:
            return None
        quoted = subject.strip()
        if m := MERGE_PR_RE.match(quoted):  # reverting a merge commit names its PR outright
            return int(m.group(1))
        # The latest PR with that title that landed before the revert.
        here = position[commit.sha]
        for key in (quoted, pr_title(Commit(sha="", parents=(), subject=quoted))):
            candidates = [n for pos, n in by_title.get(key, []) if pos < here and n != own]
            if candidates:
                return candidates[-1]
        # Cites its PR number: trust it even outside the range.
        return split_suffix(quoted)[1]

    def linked(item: _T, reverts: int | None) -> _T:
        # dataclasses.replace costs more than the rest of the linking: only for actual reverts.
        return item if reverts == item.reverts else replace(item, reverts=reverts)

    linked_prs = [linked(pr, find(commit_of[pr.merge_commit], pr.number)) for pr in prs]
    linked_directs = [linked(d, find(commit_of[d.sha], None)) for d in directs]
    return linked_prs, linked_directs
