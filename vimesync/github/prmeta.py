"""Metadata of merged pull requests: closed PRs listed newest first, paging stopped once the oldest
wanted PR is passed; optionally each one's changed files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vimesync.github.base import ClientBase
from vimesync.github.shapes import PER_PAGE, list_of_objects, number, pages_error, shape_error, text


@dataclass(frozen=True)
class PRMeta:
    """A merged PR as GitHub (or ``gh pr list --json``) describes it."""

    number: int
    title: str | None = None
    labels: tuple[str, ...] = ()
    author: str | None = None
    merge_commit: str | None = None
    files: tuple[str, ...] | None = None


class MergedPRs(ClientBase):
    """Merged-PR metadata; mixed into GitHubClient."""

    def merged_prs(self, numbers: Iterable[int], *, files: bool = False) -> dict[int, PRMeta]:
        """Metadata of the wanted merged PRs (those GitHub knows), listing closed PRs newest first."""
        wanted = set(numbers)
        found: dict[int, PRMeta] = {}
        if not wanted:
            return found
        oldest = min(wanted)
        url = f"/repos/{self.repo}/pulls"
        for page in range(1, self.max_pages + 1):
            params = {
                "state": "closed",
                "sort": "created",
                "direction": "desc",
                "per_page": PER_PAGE,
                "page": page,
            }
            items = list_of_objects(self.get(url, params), url)
            numbers = [number(i.get("number"), url) for i in items]
            for item, n in zip(items, numbers, strict=True):
                if n in wanted and item.get("merged_at"):
                    found[n] = _meta(item, url)
            # PR numbers grow with creation time: once past the oldest wanted one, stop.
            if len(items) < PER_PAGE or min(numbers) <= oldest or wanted <= set(found):
                break
        else:
            raise pages_error(url, self.max_pages)
        if files:
            for n, meta in found.items():
                found[n] = PRMeta(**{**meta.__dict__, "files": tuple(self._files(n))})
        return found

    def _files(self, number: int) -> list[str]:
        url = f"/repos/{self.repo}/pulls/{number}/files"
        paths: list[str] = []
        for page in range(1, self.max_pages + 1):
            items = list_of_objects(self.get(url, {"per_page": PER_PAGE, "page": page}), url)
            paths.extend(i["filename"] for i in items if isinstance(i.get("filename"), str))
            if len(items) < PER_PAGE:
                return paths
        raise pages_error(url, self.max_pages)


def _meta(item: dict[str, Any], url: str) -> PRMeta:
    labels = item.get("labels") or []
    user = item.get("user")
    if not isinstance(labels, list):
        raise shape_error(url, "labels as a list")
    return PRMeta(
        number=number(item.get("number"), url),
        title=text(item.get("title")),
        labels=tuple(lb["name"] for lb in labels if isinstance(lb, dict) and isinstance(lb.get("name"), str)),
        author=text(user.get("login")) if isinstance(user, dict) else None,
        merge_commit=text(item.get("merge_commit_sha")),
    )
