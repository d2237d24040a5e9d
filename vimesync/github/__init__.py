"""THE GitHub choke point: every GitHub request of vimesync goes through :class:`GitHubClient`.

- what the job's environment says is passed in as a :class:`vimesync.settings.GitHubSettings`
  (read by :mod:`vimesync.settings`, never here): the token (``GITHUB_TOKEN``, then ``GH_TOKEN``),
  handed to PyGithub and never printed, logged or cached; the API root (``VIMESYNC_GITHUB_API``,
  then ``GITHUB_API_URL``, which GitHub Actions sets, then https://api.github.com); the call
  deadline, the rate-limit budget and the cache folder;
- ``per_page=100``; PRs are listed newest first and paging stops once the oldest wanted PR is passed;
- every GET is cached on disk with its ETag and revalidated with ``If-None-Match`` (a 304 costs
  no rate limit and proves the cached copy current);
- rate limits are waited out within a per-call and a per-process budget, 5xx retried a few times
  (:mod:`vimesync.github.ratelimit`, which also says why the retry loop is ours);
- bounded, because the server is not trusted to end anything: every call (redirects, 202s and
  retries included) has an overall deadline (``VIMESYNC_GITHUB_DEADLINE``, 60 s) on top of the
  per-read ``timeout``, an answer is at most 32 MiB, a listing at most ``max_pages`` pages, and a
  redirect is followed only to the same scheme, host and port (at most 5 times): the token
  never goes anywhere else (:mod:`vimesync.github.pygithub`, the one module that touches PyGithub,
  hands PyGithub a connection sending through the one bounded HTTP layer, :mod:`vimesync.transport`);
- an answer of the wrong shape (an object where a list belongs, a list of strings) is a
  GitHubError naming the endpoint.

Only plain records (``PRMeta``, ``PullInfo``, ``PullState``, ``CommitStatus``, ``CheckRun``, ``CommitChecks``)
leave this package: no PyGithub object does. Callers use this package's names, never a
submodule's: ``names`` (owner/name), ``shapes`` (checking answers),
``etagcache``, ``ratelimit``, ``pygithub`` (the adapter), ``client`` (the request loop), and what
is read: ``prmeta``, ``prbody``, ``commits``, ``pullstate``.
"""

from __future__ import annotations

from vimesync.github.botwrites import LabelledItem, OpenPull
from vimesync.github.client import ClientLimits, GitHubClient, fetch_metadata
from vimesync.github.commits import MAX_PR_COMMITS, CheckRun, CommitChecks, CommitStatus
from vimesync.github.names import REPO_PATTERN, is_repo_name
from vimesync.github.prbody import PullInfo
from vimesync.github.prmeta import PRMeta
from vimesync.github.pullstate import PullState
from vimesync.github.pygithub import MAX_BYTES, MAX_REDIRECTS
from vimesync.github.ratelimit import WaitBudget
from vimesync.github.shapes import MAX_FIELD, MAX_PAGES, PER_PAGE

__all__ = [
    "MAX_BYTES",
    "MAX_FIELD",
    "MAX_PAGES",
    "MAX_PR_COMMITS",
    "MAX_REDIRECTS",
    "PER_PAGE",
    "REPO_PATTERN",
    "CheckRun",
    "ClientLimits",
    "CommitChecks",
    "CommitStatus",
    "GitHubClient",
    "LabelledItem",
    "OpenPull",
    "PRMeta",
    "PullInfo",
    "PullState",
    "WaitBudget",
    "fetch_metadata",
    "is_repo_name",
]
