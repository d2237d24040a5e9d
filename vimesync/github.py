"""THE GitHub choke point: every GitHub request of vimesync goes through :class:`GitHubClient`.

- token from :func:`token_from_env` (``GITHUB_TOKEN``, then ``GH_TOKEN``); it is handed to PyGithub
  and never printed, logged or cached;
- API root from :func:`api_url` (``VIMESYNC_GITHUB_API``, then ``GITHUB_API_URL``, which GitHub
  Actions sets, then https://api.github.com);
- ``per_page=100``; PRs are listed newest first and paging stops once the oldest wanted PR is passed;
- every GET is cached on disk with its ETag and revalidated with ``If-None-Match`` (a 304 costs
  no rate limit and proves the cached copy current);
- 403/429 rate limits wait at most ``max_wait`` seconds (``Retry-After`` or the reset time),
  otherwise fail with a clear GitHubError; 5xx are retried ``retries`` times with short backoff
  (only idempotent requests are made: GET, and PATCH of a whole field).

Only plain records (``PRMeta``, ``PullInfo``) leave this module: no PyGithub object does.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.errors import GitHubError
from vimesync.upstream.metadata import PRMeta

API_URL = "https://api.github.com"
PER_PAGE = 100


def token_from_env() -> str | None:
    """The GitHub token: ``GITHUB_TOKEN``, else ``GH_TOKEN`` (the gh CLI's), else None."""
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None


def api_url() -> str:
    """The API root: ``VIMESYNC_GITHUB_API``, else ``GITHUB_API_URL``, else https://api.github.com.

    ``VIMESYNC_GITHUB_API`` points at GitHub Enterprise (https://host/api/v3) or, in tests, a
    loopback server; ``GITHUB_API_URL`` is what GitHub Actions sets on every runner.
    """
    url = os.environ.get("VIMESYNC_GITHUB_API") or os.environ.get("GITHUB_API_URL") or API_URL
    return url.rstrip("/")


@dataclass(frozen=True)
class PullInfo:
    """What vimesync reads of one pull request."""

    body: str  # "" when the description is empty
    html_url: str


def cache_dir() -> Path:
    """Where HTTP responses are cached (``VIMESYNC_CACHE_DIR`` or ``~/.cache/vimesync``)."""
    root = os.environ.get("VIMESYNC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vimesync"
    )
    return Path(root) / "github"


class GitHubClient:
    """One repository on GitHub: merged-PR metadata, and reading/editing a PR description."""

    def __init__(
        self,
        repo: str,
        *,
        token: str | None = None,
        base_url: str = API_URL,
        cache: Path | None = None,
        max_wait: float = 60.0,
        retries: int = 3,
        timeout: int = 15,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from github import Auth, Github

        if repo.count("/") != 1:
            raise GitHubError(
                f"{repo!r} is not an owner/name repository", hint="set [upstream] repo in vimesync.toml"
            )
        self.repo = repo
        self.max_wait = max_wait
        self.retries = retries
        self.cache = cache if cache is not None else cache_dir()
        self.requests = 0  # HTTP requests made (for tests and --verbose figures)
        self.not_modified = 0
        self._sleep = sleep
        # retry=None: PyGithub's own retry would sleep through rate limits for up to an hour.
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url,
            per_page=PER_PAGE,
            retry=None,
            timeout=timeout,
            seconds_between_requests=None,
            user_agent="vimesync",
        )

    # -- HTTP with cache, rate limits and retries ---------------------------------------------

    def _cache_file(self, url: str, params: dict[str, Any]) -> Path:
        key = json.dumps([self._gh.requester.base_url, url, sorted(params.items())])
        return self.cache / (hashlib.sha256(key.encode()).hexdigest() + ".json")

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._gh.close()

    def _request(
        self, verb: str, url: str, params: dict[str, Any], headers: dict[str, str], body: Any = None
    ) -> tuple[dict[str, Any], Any]:
        """One request, retried on 5xx and short rate limits; GitHubError otherwise."""
        from github.GithubException import GithubException

        failures = 0
        while True:
            self.requests += 1
            try:
                return self._gh.requester.requestJsonAndCheck(verb, url, params, headers, body)
            except GithubException as exc:
                failures += 1
                self._handle(exc, url, failures)
            except Exception as exc:  # connection refused, timeouts, DNS: requests' own errors
                if type(exc).__module__.startswith(("requests", "urllib3", "http", "socket")) or isinstance(
                    exc, OSError
                ):
                    raise GitHubError(
                        f"cannot reach GitHub at {self._gh.requester.base_url}: {exc}"
                    ) from None
                raise

    def get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``url`` (relative to the API root) as JSON, through the ETag cache."""
        params = dict(params or {})
        file = self._cache_file(url, params)
        cached: dict[str, Any] | None = None
        try:
            cached = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cached = None
        headers = {"If-None-Match": cached["etag"]} if cached and cached.get("etag") else {}
        resp_headers, data = self._request("GET", url, params, headers)
        if data is None and cached is not None:  # 304 Not Modified
            self.not_modified += 1
            return cached["data"]
        etag = resp_headers.get("etag")
        if etag:
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
                tmp = file.with_suffix(".tmp")
                tmp.write_text(json.dumps({"etag": etag, "data": data}), encoding="utf-8")
                tmp.replace(file)
            except OSError:
                pass  # a cache that cannot be written only costs speed
        return data

    def _handle(self, exc: Any, url: str, failures: int) -> None:
        """Wait and return to retry, or raise GitHubError."""
        status = exc.status
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        message = exc.data.get("message", "") if isinstance(exc.data, dict) else ""
        if status in (403, 429):
            wait = _rate_limit_wait(headers)
            if wait is None and status == 403:
                raise GitHubError(
                    f"GitHub refused {url} (403): {message or 'forbidden'}",
                    hint="check that the token (GITHUB_TOKEN or GH_TOKEN) may do this",
                )
            wait = 60.0 if wait is None else wait
            if wait > self.max_wait or failures > self.retries:
                raise GitHubError(
                    f"GitHub rate limit on {url}: it asks to wait {wait:.0f}s, more than vimesync waits "
                    f"({self.max_wait:.0f}s)",
                    hint="try again later, set GITHUB_TOKEN for a higher limit, or use --pr-metadata FILE",
                )
            self._sleep(max(wait, 0.0))
            return
        if status >= 500 and failures <= self.retries:
            self._sleep(min(0.5 * 2 ** (failures - 1), 4.0))
            return
        if status == 401:
            raise GitHubError("GitHub rejected the token (401)", hint="check GITHUB_TOKEN (or GH_TOKEN)")
        if status == 404:
            raise GitHubError(
                f"GitHub: {url} not found (404)",
                hint="check the repository name and that the token can see it",
            )
        raise GitHubError(f"GitHub error {status} on {url}: {message or 'no message'}")

    # -- one pull request ---------------------------------------------------------------------

    def pull_request(self, number: int) -> PullInfo:
        """The description and web address of PR ``number`` (revalidated, so never stale)."""
        item = self.get(f"/repos/{self.repo}/pulls/{number}")
        if not isinstance(item, dict):
            raise GitHubError(f"GitHub returned an unexpected answer for /repos/{self.repo}/pulls/{number}")
        return PullInfo(body=item.get("body") or "", html_url=item.get("html_url") or "")

    def set_pull_body(self, number: int, body: str) -> None:
        """Replace the description of PR ``number`` (a whole-field PATCH: safe to retry)."""
        self._request("PATCH", f"/repos/{self.repo}/pulls/{number}", {}, {}, {"body": body})

    # -- PR metadata -------------------------------------------------------------------------

    def merged_prs(self, numbers: Iterable[int], *, files: bool = False) -> dict[int, PRMeta]:
        """Metadata of the wanted merged PRs (those GitHub knows), listing closed PRs newest first."""
        wanted = set(numbers)
        found: dict[int, PRMeta] = {}
        if not wanted:
            return found
        oldest = min(wanted)
        page = 1
        while True:
            params = {
                "state": "closed",
                "sort": "created",
                "direction": "desc",
                "per_page": PER_PAGE,
                "page": page,
            }
            items = self.get(f"/repos/{self.repo}/pulls", params)
            if not isinstance(items, list):
                raise GitHubError(f"GitHub returned an unexpected page for /repos/{self.repo}/pulls")
            for item in items:
                n = item.get("number")
                if n in wanted and item.get("merged_at"):
                    found[n] = _meta(item)
            # PR numbers grow with creation time: once past the oldest wanted one, stop.
            if len(items) < PER_PAGE or not items or min(i.get("number", 0) for i in items) <= oldest:
                break
            if wanted <= set(found):
                break
            page += 1
        if files:
            for n, meta in found.items():
                found[n] = PRMeta(**{**meta.__dict__, "files": tuple(self._files(n))})
        return found

    def _files(self, number: int) -> list[str]:
        paths: list[str] = []
        page = 1
        while True:
            items = self.get(f"/repos/{self.repo}/pulls/{number}/files", {"per_page": PER_PAGE, "page": page})
            paths.extend(i["filename"] for i in items if isinstance(i, dict) and "filename" in i)
            if len(items) < PER_PAGE:
                return paths
            page += 1


def _meta(item: dict[str, Any]) -> PRMeta:
    return PRMeta(
        number=item["number"],
        title=item.get("title"),
        labels=tuple(lb["name"] for lb in item.get("labels") or [] if isinstance(lb, dict) and "name" in lb),
        author=(item.get("user") or {}).get("login"),
        merge_commit=item.get("merge_commit_sha"),
    )


def _rate_limit_wait(headers: dict[str, str]) -> float | None:
    if "retry-after" in headers:
        try:
            return float(headers["retry-after"])
        except ValueError:
            return None
    if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
        try:
            return max(float(headers["x-ratelimit-reset"]) - time.time(), 0.0)
        except ValueError:
            return None
    return None


def fetch_metadata(repo: str, numbers: Iterable[int], **kwargs: Any) -> dict[int, PRMeta]:
    """Merged-PR metadata for ``numbers`` of ``repo``; token and API root from the environment."""
    kwargs.setdefault("base_url", api_url())
    client = GitHubClient(repo, token=token_from_env(), **kwargs)
    try:
        return client.merged_prs(numbers)
    finally:
        client.close()
