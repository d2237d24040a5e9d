"""CI results of one commit (its combined status and check runs) and the commits of a pull request.

Their strings are GitHub's (that is, whoever set a status's context or description): capped here,
escaped by whoever renders them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from vimesync.github.base import ClientBase
from vimesync.github.shapes import PER_PAGE, field, is_sha, list_of_objects, pages_error, shape_error

MAX_PR_COMMITS = 250  # GitHub lists at most 250 commits of a PR


@dataclass(frozen=True)
class CommitStatus:
    """One commit status (the latest for its context), as the combined status lists it."""

    context: str
    state: str  # success | pending | failure | error
    description: str = ""
    target_url: str = ""


@dataclass(frozen=True)
class CheckRun:
    """One check run (GitHub lists the latest of each name in each check suite)."""

    name: str
    app: str  # the app's name ("GitHub Actions"), "" when not given
    status: str  # queued | in_progress | completed | waiting | requested | pending
    conclusion: str | None  # success | failure | neutral | cancelled | skipped | timed_out | ...
    url: str = ""
    suite: int | None = None  # its check suite (a workflow run): two suites may hold one name
    workflow: str = ""  # its workflow's name (``workflow_names``), "" when not looked up


@dataclass(frozen=True)
class CommitChecks:
    sha: str
    statuses: tuple[CommitStatus, ...]
    check_runs: tuple[CheckRun, ...]


class CommitResults(ClientBase):
    """CI results and PR commits; mixed into GitHubClient."""

    def commit_checks(self, sha: str) -> CommitChecks:
        """The combined status and the check runs of exactly the commit ``sha``."""
        return CommitChecks(sha=sha, statuses=tuple(self._statuses(sha)), check_runs=tuple(self._runs(sha)))

    def workflow_names(self, sha: str) -> dict[int, str]:
        """The workflow name of each check suite run on exactly ``sha`` (GitHub Actions' workflow
        runs: ``check_suite_id`` -> ``name``); runs of another commit or of odd shape are left out."""
        url = f"/repos/{self.repo}/actions/runs"
        names: dict[int, str] = {}
        for i in self._paged_object(url, "workflow_runs", {"head_sha": sha}):
            suite, name = i.get("check_suite_id"), field(i.get("name"))
            if i.get("head_sha") not in (sha, None) or isinstance(suite, bool) or not isinstance(suite, int):
                continue
            if name:
                names.setdefault(suite, name)
        return names

    def _paged_object(
        self, url: str, key: str, query: dict[str, Any] | None = None
    ) -> Iterable[dict[str, Any]]:
        seen = 0
        for page in range(1, self.max_pages + 1):
            data = self.get(url, {**(query or {}), "per_page": PER_PAGE, "page": page})
            if not isinstance(data, dict):
                raise shape_error(url, "an object")
            items = list_of_objects(data.get(key, []), url)
            yield from items
            seen += len(items)
            total = data.get("total_count")
            if len(items) < PER_PAGE or (isinstance(total, int) and seen >= total):
                return
        raise pages_error(url, self.max_pages)

    def _statuses(self, sha: str) -> list[CommitStatus]:
        url = f"/repos/{self.repo}/commits/{sha}/status"
        return [
            CommitStatus(
                context=field(i.get("context")),
                state=field(i.get("state")),
                description=field(i.get("description")),
                target_url=field(i.get("target_url")),
            )
            for i in self._paged_object(url, "statuses")
        ]

    def _runs(self, sha: str) -> list[CheckRun]:
        url = f"/repos/{self.repo}/commits/{sha}/check-runs"
        runs = []
        for i in self._paged_object(url, "check_runs"):
            app = i.get("app")
            conclusion = i.get("conclusion")
            suite = i.get("check_suite")
            suite_id = suite.get("id") if isinstance(suite, dict) else None
            runs.append(
                CheckRun(
                    name=field(i.get("name")),
                    app=field(app.get("name")) if isinstance(app, dict) else "",
                    status=field(i.get("status")),
                    conclusion=field(conclusion) if isinstance(conclusion, str) else None,
                    url=field(i.get("html_url") or i.get("details_url")),
                    suite=suite_id if isinstance(suite_id, int) and not isinstance(suite_id, bool) else None,
                )
            )
        return runs

    def pull_head(self, number: int) -> str:
        """The sha of PR ``number``'s head commit (revalidated, so never stale)."""
        url = f"/repos/{self.repo}/pulls/{number}"
        item = self.get(url)
        head = item.get("head") if isinstance(item, dict) else None
        sha = head.get("sha") if isinstance(head, dict) else None
        if not isinstance(sha, str) or not is_sha(sha):
            raise shape_error(url, "a pull request with a head sha")
        return sha

    def pull_commits(self, number: int) -> list[str]:
        """The shas of PR ``number``'s commits, oldest first (GitHub lists at most 250)."""
        url = f"/repos/{self.repo}/pulls/{number}/commits"
        shas: list[str] = []
        for page in range(1, MAX_PR_COMMITS // PER_PAGE + 2):
            items = list_of_objects(self.get(url, {"per_page": PER_PAGE, "page": page}), url)
            for i in items:
                sha = i.get("sha")
                if not isinstance(sha, str) or not is_sha(sha):
                    raise shape_error(url, "commits with a sha")
                shas.append(sha)
            if len(items) < PER_PAGE:
                break
        return shas
