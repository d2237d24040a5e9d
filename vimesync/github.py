"""THE GitHub choke point: every GitHub request of vimesync goes through :class:`GitHubClient`.

- token from :func:`token_from_env` (``GITHUB_TOKEN``, then ``GH_TOKEN``); it is handed to PyGithub
  and never printed, logged or cached;
- API root from :func:`api_url` (``VIMESYNC_GITHUB_API``, then ``GITHUB_API_URL``, which GitHub
  Actions sets, then https://api.github.com);
- ``per_page=100``; PRs are listed newest first and paging stops once the oldest wanted PR is passed;
- every GET is cached on disk with its ETag and revalidated with ``If-None-Match`` (a 304 costs
  no rate limit and proves the cached copy current);
- 403/429 rate limits wait at most ``max_wait`` seconds (``Retry-After`` or the reset time), and
  all waits of the process together at most ``VIMESYNC_GITHUB_WAIT_BUDGET`` (60 s), otherwise fail
  with a clear GitHubError; 5xx are retried ``retries`` times with short backoff (only idempotent
  requests are made: GET, and PATCH of a whole field);
- bounded, because the server is not trusted to end anything: every call (redirects, 202s and
  retries included) has an overall deadline (``VIMESYNC_GITHUB_DEADLINE``, 60 s) on top of the
  per-read ``timeout``, an answer is at most 32 MiB, a listing at most ``max_pages`` pages, and a
  redirect is followed only to the same scheme, host and port (at most 5 times): the token
  never goes anywhere else;
- an answer of the wrong shape (an object where a list belongs, a list of strings) is a
  GitHubError naming the endpoint.

Only plain records (``PRMeta``, ``PullInfo``, ``CommitStatus``, ``CheckRun``, ``CommitChecks``)
leave this module: no PyGithub object does. Their strings are GitHub's (that is, whoever set a
status's context or description): capped here, escaped by whoever renders them.

Why the retry loop is ours and not PyGithub's ``GithubRetry`` (or a urllib3 ``Retry``): both run
inside ``requests``, below the connection class that bounds each answer. On every retried answer
urllib3 drains the body (``drain_conn``) and ``GithubRetry`` reads all of it (``get_content``) to
look for a rate-limit message, with no size cap and no overall deadline, so a hostile or broken
server could hold a run or fill memory with one 5xx or 403. Their waits are ``time.sleep`` (not
injectable), ``GithubRetry`` waits out a primary rate limit until its reset (up to an hour) and
knows no per-process budget. So PyGithub runs with ``retry=None`` and no throttles, and
:meth:`GitHubClient._request` retries with the same rules, every byte read through the bounded
connection class, waits through ``sleep`` (and the rate-limit reset read on ``clock``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.config import cache_root
from vimesync.errors import GitHubError

API_URL = "https://api.github.com"
PER_PAGE = 100
MAX_PAGES = 100  # of a listing: 10,000 PRs
MAX_BYTES = 32 * 1024 * 1024  # of one answer
MAX_REDIRECTS = 5
DEADLINE = 60.0  # seconds for one call, whatever the server does
WAIT_BUDGET = 60.0  # seconds of rate-limit waits in one process


@dataclass(frozen=True)
class PRMeta:
    """A merged PR as GitHub (or ``gh pr list --json``) describes it."""

    number: int
    title: str | None = None
    labels: tuple[str, ...] = ()
    author: str | None = None
    merge_commit: str | None = None
    files: tuple[str, ...] | None = None


def _seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable ``name``, else ``default``."""
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        raise GitHubError(f"{name} must be a number of seconds") from None
    if not value > 0:
        raise GitHubError(f"{name} must be a positive number of seconds")
    return value


class _Abort(Exception):
    """A bound was hit inside one HTTP exchange (message without the token or the answer)."""


class _CallLimits(threading.local):
    """The bounds of the call in progress on this thread, read by the connection classes."""

    deadline = float("inf")  # time.monotonic() after which no more is read or sent
    redirects = 0


_limits = _CallLimits()


class WaitBudget:
    """Seconds of rate-limit waiting left, shared by every client of the process."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds


_process_budget: WaitBudget | None = None


def _default_budget() -> WaitBudget:
    global _process_budget
    if _process_budget is None:
        _process_budget = WaitBudget(_seconds("VIMESYNC_GITHUB_WAIT_BUDGET", WAIT_BUDGET))
    return _process_budget


@functools.cache
def _bounded_connections() -> tuple[type, type]:
    """PyGithub's requests-based connection classes, reading with a deadline, a size cap and
    same-origin redirects only."""
    from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, RequestsResponse

    class Bounded:
        protocol: str
        host: str
        port: int
        verb: str
        url: str
        input: Any
        headers: dict[str, str]
        timeout: int | None
        verify: Any
        session: Any

        def getresponse(self) -> Any:
            if time.monotonic() > _limits.deadline:
                raise _Abort("no answer within the deadline")
            r = self.session.request(
                self.verb,
                f"{self.protocol}://{self.host}:{self.port}{self.url}",
                headers=self.headers,
                data=self.input,
                timeout=self.timeout,  # for the connection and each read
                verify=self.verify,
                allow_redirects=False,
                stream=True,
            )
            try:
                if r.status_code in (301, 302, 303, 307, 308):
                    self._check_redirect(r.headers.get("location") or "")
                # read1 returns what has arrived, so a trickle cannot hold a read past the deadline
                # (urllib3 2); requests leaves decoding (gzip) to the reader.
                read = getattr(r.raw, "read1", None) or r.raw.read
                chunks: list[bytes] = []
                size = 0
                while chunk := read(65536, decode_content=True):
                    size += len(chunk)
                    if size > MAX_BYTES:
                        raise _Abort(f"an answer larger than {MAX_BYTES // (1024 * 1024)} MiB")
                    if time.monotonic() > _limits.deadline:
                        raise _Abort("no complete answer within the deadline")
                    chunks.append(chunk)
                r._content = b"".join(chunks)
            finally:
                r.close()
            return RequestsResponse(r)

        def _check_redirect(self, location: str) -> None:
            from urllib.parse import urljoin, urlsplit

            here = urlsplit(f"{self.protocol}://{self.host}:{self.port}/")
            there = urlsplit(urljoin(f"{self.protocol}://{self.host}:{self.port}{self.url}", location))
            default = {"http": 80, "https": 443}
            try:
                same = (there.scheme, there.hostname, there.port or default.get(there.scheme)) == (
                    here.scheme,
                    here.hostname,
                    here.port,
                )
            except ValueError:  # a port that is no number
                same = False
            if not same:
                raise _Abort("a redirect to another host (not followed: the token stays with GitHub)")
            _limits.redirects += 1
            if _limits.redirects > MAX_REDIRECTS:
                raise _Abort(f"more than {MAX_REDIRECTS} redirects")

    class BoundedHTTP(Bounded, HTTPRequestsConnectionClass):
        pass

    class BoundedHTTPS(Bounded, HTTPSRequestsConnectionClass):
        pass

    return BoundedHTTP, BoundedHTTPS


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


# -- CI results of one commit ----------------------------------------------------------------

MAX_FIELD = 1024  # characters kept of a context, description, name or URL
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
    """One check run (the latest of its name and app)."""

    name: str
    app: str  # the app's name ("GitHub Actions"), "" when not given
    status: str  # queued | in_progress | completed | waiting | requested | pending
    conclusion: str | None  # success | failure | neutral | cancelled | skipped | timed_out | ...
    url: str = ""


@dataclass(frozen=True)
class CommitChecks:
    sha: str
    statuses: tuple[CommitStatus, ...]
    check_runs: tuple[CheckRun, ...]


def _field(value: Any) -> str:
    return value[:MAX_FIELD] if isinstance(value, str) else ""


class _CommitMixin:
    """CI results and PR commits; mixed into GitHubClient (kept apart for reading)."""

    repo: str
    max_pages: int
    get: Callable[..., Any]

    def commit_checks(self, sha: str) -> CommitChecks:
        """The combined status and the check runs of exactly the commit ``sha``."""
        return CommitChecks(sha=sha, statuses=tuple(self._statuses(sha)), check_runs=tuple(self._runs(sha)))

    def _paged_object(self, url: str, key: str) -> Iterable[dict[str, Any]]:
        seen = 0
        for page in range(1, self.max_pages + 1):
            data = self.get(url, {"per_page": PER_PAGE, "page": page})
            if not isinstance(data, dict):
                raise _shape_error(url, "an object")
            items = _list_of_objects(data.get(key, []), url)
            yield from items
            seen += len(items)
            total = data.get("total_count")
            if len(items) < PER_PAGE or (isinstance(total, int) and seen >= total):
                return
        raise _pages_error(url, self.max_pages)

    def _statuses(self, sha: str) -> list[CommitStatus]:
        url = f"/repos/{self.repo}/commits/{sha}/status"
        return [
            CommitStatus(
                context=_field(i.get("context")),
                state=_field(i.get("state")),
                description=_field(i.get("description")),
                target_url=_field(i.get("target_url")),
            )
            for i in self._paged_object(url, "statuses")
        ]

    def _runs(self, sha: str) -> list[CheckRun]:
        url = f"/repos/{self.repo}/commits/{sha}/check-runs"
        runs = []
        for i in self._paged_object(url, "check_runs"):
            app = i.get("app")
            conclusion = i.get("conclusion")
            runs.append(
                CheckRun(
                    name=_field(i.get("name")),
                    app=_field(app.get("name")) if isinstance(app, dict) else "",
                    status=_field(i.get("status")),
                    conclusion=_field(conclusion) if isinstance(conclusion, str) else None,
                    url=_field(i.get("html_url") or i.get("details_url")),
                )
            )
        return runs

    def pull_head(self, number: int) -> str:
        """The sha of PR ``number``'s head commit (revalidated, so never stale)."""
        url = f"/repos/{self.repo}/pulls/{number}"
        item = self.get(url)
        head = item.get("head") if isinstance(item, dict) else None
        sha = head.get("sha") if isinstance(head, dict) else None
        if not isinstance(sha, str) or not _is_sha(sha):
            raise _shape_error(url, "a pull request with a head sha")
        return sha

    def pull_commits(self, number: int) -> list[str]:
        """The shas of PR ``number``'s commits, oldest first (GitHub lists at most 250)."""
        url = f"/repos/{self.repo}/pulls/{number}/commits"
        shas: list[str] = []
        for page in range(1, MAX_PR_COMMITS // PER_PAGE + 2):
            items = _list_of_objects(self.get(url, {"per_page": PER_PAGE, "page": page}), url)
            for i in items:
                sha = i.get("sha")
                if not isinstance(sha, str) or not _is_sha(sha):
                    raise _shape_error(url, "commits with a sha")
                shas.append(sha)
            if len(items) < PER_PAGE:
                break
        return shas


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def cache_dir() -> Path:
    """Where HTTP responses are cached: ``github/`` in vimesync's cache folder."""
    return cache_root() / "github"


# owner/name as GitHub allows them: the one check for a repository named by config, a flag or a link.
REPO_PATTERN = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}"


def is_repo_name(text: str) -> bool:
    return re.fullmatch(REPO_PATTERN, text) is not None


class GitHubClient(_CommitMixin):
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
        deadline: float | None = None,
        max_pages: int = MAX_PAGES,
        wait_budget: WaitBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from github import Auth, Github
        from github.Requester import Requester

        if not is_repo_name(repo):
            raise GitHubError(
                f"{repo!r} is not an owner/name repository", hint="set [upstream] repo in vimesync.toml"
            )
        self.repo = repo
        self.max_wait = max_wait
        self.retries = retries
        self.cache = cache if cache is not None else cache_dir()
        self.requests = 0  # HTTP requests made (for tests and --verbose figures)
        self.not_modified = 0
        self.deadline = deadline if deadline is not None else _seconds("VIMESYNC_GITHUB_DEADLINE", DEADLINE)
        self.max_pages = max_pages
        self.budget = wait_budget if wait_budget is not None else _default_budget()
        self._sleep = sleep
        self._clock = clock  # wall clock, for X-RateLimit-Reset (seconds since the epoch)
        # Every connection PyGithub makes from now on reads within the call's bounds (class-wide:
        # vimesync is the only user of PyGithub in its process).
        Requester.injectConnectionClasses(*_bounded_connections())
        # retry=None: PyGithub's own retry would sleep through rate limits for up to an hour, and
        # reads retried answers unbounded (module doc). No throttles: PyGithub's default waits a
        # second between writes with a real sleep; vimesync makes one PATCH per run.
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url,
            per_page=PER_PAGE,
            retry=None,
            timeout=timeout,
            seconds_between_requests=None,
            seconds_between_writes=None,
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
        _limits.deadline = time.monotonic() + self.deadline
        _limits.redirects = 0
        try:
            while True:
                self.requests += 1
                try:
                    return self._gh.requester.requestJsonAndCheck(verb, url, params, headers, body)
                except GithubException as exc:
                    failures += 1
                    self._handle(exc, url, failures)
                except _Abort as exc:
                    raise GitHubError(f"GitHub {url}: {exc}", hint=_BOUND_HINT) from None
                except Exception as exc:  # connection refused, timeouts, DNS: requests' own errors
                    if type(exc).__module__.startswith(
                        ("requests", "urllib3", "http", "socket")
                    ) or isinstance(exc, OSError):
                        # requests' messages name the host and path, never the headers (the token).
                        raise GitHubError(
                            f"cannot reach GitHub at {self._gh.requester.base_url}: {exc}"
                        ) from None
                    # PyGithub's own complaints (a redirect loop, a 202 forever): no traceback.
                    raise GitHubError(f"GitHub {url}: unusable answer ({type(exc).__name__})") from None
        finally:
            _limits.deadline = float("inf")

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
            wait = _rate_limit_wait(headers, self._clock())
            if wait is None and status == 403:
                raise GitHubError(
                    f"GitHub refused {url} (403): {message or 'forbidden'}",
                    hint="check that the token (GITHUB_TOKEN or GH_TOKEN) may do this",
                )
            wait = 60.0 if wait is None else max(wait, 0.0)
            hint = "try again later, set GITHUB_TOKEN for a higher limit, or use --pr-metadata FILE"
            if wait > self.max_wait or failures > self.retries:
                raise GitHubError(
                    f"GitHub rate limit on {url}: it asks to wait {wait:.0f}s, more than vimesync waits "
                    f"({self.max_wait:.0f}s)",
                    hint=hint,
                )
            if wait > self.budget.left:
                raise GitHubError(
                    f"GitHub rate limit on {url}: it asks to wait {wait:.0f}s more, beyond what vimesync "
                    "waits in one run (VIMESYNC_GITHUB_WAIT_BUDGET)",
                    hint=hint,
                )
            self.budget.left -= wait
            # The wait is not the server's time: the call's deadline starts again after it.
            self._sleep(wait)
            _limits.deadline = time.monotonic() + self.deadline
            return
        if isinstance(status, int) and status >= 500 and failures <= self.retries:
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
        url = f"/repos/{self.repo}/pulls/{number}"
        item = self.get(url)
        if not isinstance(item, dict):
            raise _shape_error(url, "an object")
        body, html_url = item.get("body") or "", item.get("html_url") or ""
        if not isinstance(body, str) or not isinstance(html_url, str):
            raise _shape_error(url, "a pull request with a text body")
        return PullInfo(body=body, html_url=html_url)

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
        url = f"/repos/{self.repo}/pulls"
        for page in range(1, self.max_pages + 1):
            params = {
                "state": "closed",
                "sort": "created",
                "direction": "desc",
                "per_page": PER_PAGE,
                "page": page,
            }
            items = _list_of_objects(self.get(url, params), url)
            numbers = [_int(i.get("number"), url) for i in items]
            for item, n in zip(items, numbers, strict=True):
                if n in wanted and item.get("merged_at"):
                    found[n] = _meta(item, url)
            # PR numbers grow with creation time: once past the oldest wanted one, stop.
            if len(items) < PER_PAGE or min(numbers) <= oldest or wanted <= set(found):
                break
        else:
            raise _pages_error(url, self.max_pages)
        if files:
            for n, meta in found.items():
                found[n] = PRMeta(**{**meta.__dict__, "files": tuple(self._files(n))})
        return found

    def _files(self, number: int) -> list[str]:
        url = f"/repos/{self.repo}/pulls/{number}/files"
        paths: list[str] = []
        for page in range(1, self.max_pages + 1):
            items = _list_of_objects(self.get(url, {"per_page": PER_PAGE, "page": page}), url)
            paths.extend(i["filename"] for i in items if isinstance(i.get("filename"), str))
            if len(items) < PER_PAGE:
                return paths
        raise _pages_error(url, self.max_pages)


_BOUND_HINT = "GitHub (or VIMESYNC_GITHUB_API) misbehaved; try again later or use --pr-metadata FILE"


def _shape_error(url: str, expected: str) -> GitHubError:
    return GitHubError(f"GitHub returned an unexpected answer for {url}: expected {expected}")


def _pages_error(url: str, pages: int) -> GitHubError:
    return GitHubError(
        f"GitHub {url}: more than {pages} pages, vimesync stops there",
        hint="narrow the range, or use --pr-metadata FILE",
    )


def _list_of_objects(data: Any, url: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise _shape_error(url, "a list of objects")
    return data


def _int(value: Any, url: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _shape_error(url, "pull requests with a number")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _meta(item: dict[str, Any], url: str) -> PRMeta:
    labels = item.get("labels") or []
    user = item.get("user")
    if not isinstance(labels, list):
        raise _shape_error(url, "labels as a list")
    return PRMeta(
        number=_int(item.get("number"), url),
        title=_text(item.get("title")),
        labels=tuple(lb["name"] for lb in labels if isinstance(lb, dict) and isinstance(lb.get("name"), str)),
        author=_text(user.get("login")) if isinstance(user, dict) else None,
        merge_commit=_text(item.get("merge_commit_sha")),
    )


def _rate_limit_wait(headers: dict[str, str], now: float) -> float | None:
    if "retry-after" in headers:
        try:
            return float(headers["retry-after"])
        except ValueError:
            return None
    if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
        try:
            return max(float(headers["x-ratelimit-reset"]) - now, 0.0)
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
