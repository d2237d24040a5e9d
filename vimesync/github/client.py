"""One repository on GitHub: :class:`GitHubClient`, every request of vimesync to GitHub.

A call is one request through the bounded PyGithub session (:mod:`vimesync.github.pygithub`),
retried by :mod:`vimesync.github.ratelimit`; every GET goes through the ETag cache
(:mod:`vimesync.github.etagcache`). What is read lives in the mixins: merged-PR metadata
(:mod:`~vimesync.github.prmeta`), a PR description (:mod:`~vimesync.github.prbody`), CI results
and PR commits (:mod:`~vimesync.github.commits`), one PR's state (:mod:`~vimesync.github.pullstate`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from vimesync.errors import GitHubError
from vimesync.github import etagcache
from vimesync.github.botwrites import BotWrites
from vimesync.github.commits import CommitResults
from vimesync.github.names import is_repo_name
from vimesync.github.prbody import PullBody
from vimesync.github.prmeta import MergedPRs, PRMeta
from vimesync.github.pullstate import PullStates
from vimesync.github.pygithub import Failure, Session
from vimesync.github.ratelimit import RATE_LIMITED, RetryRules, WaitBudget, default_budget, next_wait
from vimesync.github.shapes import MAX_PAGES, PER_PAGE
from vimesync.settings import GitHubSettings
from vimesync.transport import BadAddress, RedirectRefused, TransportError, Unreachable

_BOUND_HINT = "GitHub (or VIMESYNC_GITHUB_API) misbehaved; try again later or use --pr-metadata FILE"


@dataclass(frozen=True)
class ClientLimits:
    """How long one client waits and how much it reads (the call's deadline is the settings')."""

    max_wait: float = 60.0  # seconds one rate limit may ask for
    retries: int = 3  # failures of one call retried (5xx, short rate limits)
    timeout: float = 15.0  # seconds for the connection and for each socket read
    max_pages: int = MAX_PAGES  # of one listing


class GitHubClient(MergedPRs, PullBody, CommitResults, PullStates, BotWrites):
    """One repository on GitHub: merged-PR metadata, reading/editing a PR description, CI results,
    one PR's state. ``settings`` give the token, the API root, the call deadline, the rate-limit
    budget and the cache folder; ``wait_budget`` is shared by every client of the process unless
    one is given (tests)."""

    def __init__(
        self,
        repo: str,
        settings: GitHubSettings,
        *,
        limits: ClientLimits = ClientLimits(),  # noqa: B008 (frozen)
        wait_budget: WaitBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not is_repo_name(repo):
            raise GitHubError(
                f"{repo!r} is not an owner/name repository", hint="set [upstream] repo in vimesync.toml"
            )
        self.repo = repo
        self.max_wait = limits.max_wait
        self.retries = limits.retries
        self.cache = settings.cache
        self.requests = 0  # HTTP requests made (for tests and --verbose figures)
        self.not_modified = 0
        self.deadline = settings.deadline
        self.max_pages = limits.max_pages
        self.budget = wait_budget if wait_budget is not None else default_budget(settings.wait_budget)
        self._sleep = sleep
        self._clock = clock  # wall clock, for X-RateLimit-Reset (seconds since the epoch)
        try:
            self._session = Session(
                token=settings.token, base_url=settings.api, per_page=PER_PAGE, timeout=limits.timeout
            )
        except BadAddress:
            raise GitHubError(
                "the GitHub API root (VIMESYNC_GITHUB_API or GITHUB_API_URL) is not an http(s) URL"
            ) from None

    @property
    def graphql_url(self) -> str:
        return self._session.graphql_url

    def close(self) -> None:
        """Release the HTTP connection."""
        self._session.close()

    def _request(
        self, verb: str, url: str, params: dict[str, Any], headers: dict[str, str], body: Any = None
    ) -> tuple[dict[str, Any], Any]:
        """One request, retried on 5xx and short rate limits; GitHubError otherwise."""
        rules = RetryRules(max_wait=self.max_wait, retries=self.retries, budget=self.budget)
        failures = 0
        self._session.start(self.deadline)
        try:
            while True:
                self.requests += 1
                try:
                    return self._session.request(verb, url, params, headers, body)
                except Failure as failure:
                    failures += 1
                    self._sleep(next_wait(failure, url, failures, rules, self._clock()))
                    if failure.status in RATE_LIMITED:
                        # The wait is not the server's time: the call's deadline starts again after it.
                        self._session.start(self.deadline)
                except Unreachable as exc:
                    raise GitHubError(
                        f"cannot reach GitHub at {self._session.base_url}: {exc.reason}"
                    ) from None
                except TransportError as exc:
                    raise GitHubError(f"GitHub {url}: {_bound(exc)}", hint=_BOUND_HINT) from None
                except Exception as exc:  # PyGithub's own complaints (a 202 forever): no traceback
                    raise GitHubError(f"GitHub {url}: unusable answer ({type(exc).__name__})") from None
        finally:
            self._session.stop()

    def get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``url`` (relative to the API root) as JSON, through the ETag cache."""
        params = dict(params or {})
        file = etagcache.entry_file(self.cache, self._session.base_url, url, params)
        cached = etagcache.load(file)
        resp_headers, data = self._request("GET", url, params, etagcache.revalidation(cached))
        if data is None and cached is not None:  # 304 Not Modified
            self.not_modified += 1
            return cached["data"]
        etag = resp_headers.get("etag")
        if etag:
            etagcache.store(file, etag, data)
        return data


def _bound(exc: TransportError) -> str:
    if isinstance(exc, RedirectRefused) and exc.elsewhere:
        return "a redirect to another host (not followed: the token stays with GitHub)"
    return str(exc)


def fetch_metadata(repo: str, numbers: Iterable[int], settings: GitHubSettings) -> dict[int, PRMeta]:
    """Merged-PR metadata for ``numbers`` of ``repo``."""
    client = GitHubClient(repo, settings)
    try:
        return client.merged_prs(numbers)
    finally:
        client.close()
