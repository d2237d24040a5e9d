"""What one failed answer means: wait (a rate limit, a 5xx) and retry, or a GitHubError.

403/429 rate limits wait at most ``max_wait`` seconds (``Retry-After`` or the reset time), and all
waits of the process together at most ``VIMESYNC_GITHUB_WAIT_BUDGET`` (60 s), otherwise fail with
a clear GitHubError; 5xx are retried ``retries`` times with short backoff (only idempotent
requests are made: GET, and PATCH of a whole field).

Why the retry loop is ours and not PyGithub's ``GithubRetry`` (or a urllib3 ``Retry``): both run
inside ``requests``, below the connection that bounds each answer. On every retried answer
urllib3 drains the body (``drain_conn``) and ``GithubRetry`` reads all of it (``get_content``) to
look for a rate-limit message, with no size cap and no overall deadline, so a hostile or broken
server could hold a run or fill memory with one 5xx or 403. Their waits are ``time.sleep`` (not
injectable), ``GithubRetry`` waits out a primary rate limit until its reset (up to an hour) and
knows no per-process budget. So PyGithub runs with ``retry=None`` (:mod:`vimesync.github.pygithub`)
and the client retries by :func:`next_wait`, waiting through its own ``sleep``.
"""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.errors import GitHubError
from vimesync.github.pygithub import Failure


class WaitBudget:
    """Seconds of rate-limit waiting left, shared by every client of the process."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds


_process_budget: WaitBudget | None = None


def default_budget(seconds: float) -> WaitBudget:
    """The process's budget: ``seconds`` (``VIMESYNC_GITHUB_WAIT_BUDGET``) as the first client
    of the process is given them."""
    global _process_budget
    if _process_budget is None:
        _process_budget = WaitBudget(seconds)
    return _process_budget


RATE_LIMITED = (403, 429)  # statuses whose wait is the server's, not a backoff


@dataclass(frozen=True)
class RetryRules:
    max_wait: float  # seconds one rate limit may ask for
    retries: int  # failures of one call retried
    budget: WaitBudget


def next_wait(failure: Failure, url: str, failures: int, rules: RetryRules, now: float) -> float:
    """Seconds to wait before retrying ``url`` after its ``failures``-th failure, or GitHubError.
    A rate-limit wait is taken from the budget; ``now`` is the wall clock (X-RateLimit-Reset)."""
    status = failure.status
    headers = {k.lower(): v for k, v in (failure.headers or {}).items()}
    message = failure.data.get("message", "") if isinstance(failure.data, dict) else ""
    if status in RATE_LIMITED:
        wait = rate_limit_wait(headers, now)
        if wait is None and status == 403:
            raise GitHubError(
                f"GitHub refused {url} (403): {message or 'forbidden'}",
                hint="check that the token (GITHUB_TOKEN or GH_TOKEN) may do this",
            )
        wait = 60.0 if wait is None else max(wait, 0.0)
        hint = "try again later, set GITHUB_TOKEN for a higher limit, or use --pr-metadata FILE"
        if wait > rules.max_wait or failures > rules.retries:
            raise GitHubError(
                f"GitHub rate limit on {url}: it asks to wait {wait:.0f}s, more than vimesync waits "
                f"({rules.max_wait:.0f}s)",
                hint=hint,
            )
        if wait > rules.budget.left:
            raise GitHubError(
                f"GitHub rate limit on {url}: it asks to wait {wait:.0f}s more, beyond what vimesync "
                "waits in one run (VIMESYNC_GITHUB_WAIT_BUDGET)",
                hint=hint,
            )
        rules.budget.left -= wait
        return wait
    if isinstance(status, int) and status >= 500 and failures <= rules.retries:
        return min(0.5 * 2.0 ** (failures - 1), 4.0)
    if status == 401:
        raise GitHubError("GitHub rejected the token (401)", hint="check GITHUB_TOKEN (or GH_TOKEN)")
    if status == 404:
        raise GitHubError(
            f"GitHub: {url} not found (404)",
            hint="check the repository name and that the token can see it",
        )
    raise GitHubError(f"GitHub error {status} on {url}: {message or 'no message'}")


def rate_limit_wait(headers: dict[str, str], now: float) -> float | None:
    """The wait a rate-limited answer asks for (lower-cased ``headers``), None when it names none."""
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
