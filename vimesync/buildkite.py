"""THE Buildkite choke point: the builds of one commit, or one build by its number, read from
Buildkite's REST API (``GET /v2/organizations/{org}/pipelines/{pipeline}/builds?commit=SHA``,
``.../builds/{number}``) through the one bounded
HTTP layer (:mod:`vimesync.transport`; one channel per listing, nothing cached):

- the token and the API root are passed in (:class:`vimesync.settings.BuildkiteSettings`:
  ``BUILDKITE_API_TOKEN``; ``VIMESYNC_BUILDKITE_API``, tests: a loopback server, else
  https://api.buildkite.com); the token is sent as ``Authorization: Bearer`` and never printed:
  no message here holds it or an answer's text;
- every listing has one overall deadline (60 s, every page, from the connection to the last
  byte: a server trickling its headers or body cannot hold it); an answer is at most 16 MiB and
  100,000 JSON objects; at most 10 pages of 100 builds are read; a redirect is never followed
  (the token stays with the API root);
- an answer of the wrong shape is a :class:`BuildkiteError` naming the endpoint; strings are cut
  at 1,024 characters (whoever writes a pipeline names its jobs: the renderers escape them).

Only plain records (:class:`Build`, :class:`BuildkiteJob`) leave this module."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from vimesync.errors import BuildkiteError
from vimesync.settings import BuildkiteSettings
from vimesync.transport import (
    BadAddress,
    BadJson,
    Channel,
    Overdue,
    RedirectRefused,
    TransferLimits,
    TransportError,
    Unreachable,
    decode_json,
)

TOKEN_ENV = "BUILDKITE_API_TOKEN"
READ_TIMEOUT = 30.0
MAX_BYTES = 16 * 1024 * 1024
MAX_OBJECTS = 100_000
MAX_PAGES = 10
PER_PAGE = 100
MAX_FIELD = 1_024
MAX_JOBS = 5_000  # jobs of one build kept (Buildkite's own limit per build is 4,000)
SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")  # an organization's or pipeline's slug
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class BuildkiteJob:
    """One job of a build (an attempt: a retried job and its retry are two)."""

    id: str
    type: str  # script | waiter | manual | trigger
    name: str
    state: str  # passed | failed | running | canceled | timed_out | broken | skipped | ...
    exit_status: int | None  # -1: the agent was lost (no test ran to an end)
    retried: bool = False  # superseded by ``retried_in_job_id``
    retried_in_job_id: str = ""
    retries_count: int = 0
    soft_failed: bool = False
    step_key: str = ""  # the step's ``key`` (every attempt and parallel shard of a step shares it)
    group_key: str = ""  # the key of the group step holding it ("" when none, or an older API)


@dataclass(frozen=True)
class Build:
    number: int
    state: str
    commit: str
    url: str
    jobs: tuple[BuildkiteJob, ...]


def check_pipeline(value: str, where: str) -> tuple[str, str]:
    """``org/pipeline`` -> (org, pipeline), both Buildkite slugs (BuildkiteError otherwise)."""
    org, sep, pipeline = value.partition("/")
    if not sep or not SLUG.fullmatch(org) or not SLUG.fullmatch(pipeline):
        raise BuildkiteError(f"{where} {value[:60]!r}: expected org/pipeline (Buildkite slugs)")
    return org, pipeline


def _channel(pipeline: str, settings: BuildkiteSettings) -> tuple[Channel, str]:
    """A channel to the API root and the path of ``pipeline``'s builds."""
    org, name = check_pipeline(pipeline, "[ci] buildkite")
    if not settings.token:
        raise BuildkiteError(f"{TOKEN_ENV} is not set: Buildkite is not asked")
    path = f"/v2/organizations/{quote(org)}/pipelines/{quote(name)}/builds"
    limits = TransferLimits(max_bytes=MAX_BYTES, connect_timeout=READ_TIMEOUT, read_timeout=READ_TIMEOUT)
    try:
        channel = Channel(settings.api, limits=limits, headers={"Authorization": f"Bearer {settings.token}"})
    except BadAddress:
        raise BuildkiteError("VIMESYNC_BUILDKITE_API must be an http(s) URL") from None
    return channel, path


def build_by_number(pipeline: str, number: int, settings: BuildkiteSettings) -> Build | None:
    """Build ``number`` of ``pipeline`` (``GET .../builds/{number}``; None: no such build)."""
    if not 0 <= number < 10**9:
        raise BuildkiteError(f"build #{number}: expected a build number")
    channel, path = _channel(pipeline, settings)
    deadline = time.monotonic() + settings.deadline
    try:
        data = _get(channel, f"{path}/{number}", "", deadline, settings.deadline, missing_ok=True)
    finally:
        channel.close()
    if data is None:
        return None
    build = _build(data, f"{path}/{number}")
    if build.number != number:
        raise BuildkiteError(f"GET {path}/{number}: the answer is another build")
    return build


def builds_of_commit(pipeline: str, sha: str, settings: BuildkiteSettings) -> list[Build]:
    """Every build of ``pipeline`` (``org/pipeline``) for exactly the commit ``sha``, newest first."""
    check_pipeline(pipeline, "[ci] buildkite")
    if not _SHA.fullmatch(sha):
        raise BuildkiteError(f"{sha[:44]!r} is not a full commit sha")
    channel, path = _channel(pipeline, settings)
    builds: list[Build] = []
    deadline = time.monotonic() + settings.deadline
    try:
        for page in range(1, MAX_PAGES + 1):
            query = urlencode({"commit": sha, "per_page": PER_PAGE, "page": page})
            data = _get(channel, path, query, deadline, settings.deadline)
            if not isinstance(data, list):
                raise BuildkiteError(f"GET {path}: expected a list of builds")
            builds += [_build(item, path) for item in data]
            if len(data) < PER_PAGE:
                return sorted((b for b in builds if b.commit == sha), key=lambda b: -b.number)
    finally:
        channel.close()
    raise BuildkiteError(f"GET {path}: more than {MAX_PAGES} pages of builds for one commit")


def _get(
    channel: Channel, endpoint: str, query: str, deadline: float, seconds: float, *, missing_ok: bool = False
) -> Any:
    """The JSON answer to ``GET endpoint?query`` (None for a 404 when ``missing_ok``)."""
    try:
        answer = channel.exchange(
            "GET",
            f"{channel.prefix}{endpoint}" + (f"?{query}" if query else ""),
            deadline=deadline,
            headers={"Accept": "application/json"},
        )
    except TransportError as exc:
        raise BuildkiteError(f"GET {endpoint}: {_failure(exc, seconds)}") from None
    status = answer.status
    if 300 <= status < 400:
        raise BuildkiteError(f"GET {endpoint}: a redirect (HTTP {status}), not followed")
    if status in (401, 403):
        raise BuildkiteError(
            f"GET {endpoint}: HTTP {status}: {TOKEN_ENV} was refused",
            hint="the token needs the read_builds scope for this organization",
        )
    if status == 404 and missing_ok:
        return None
    if status >= 400:
        raise BuildkiteError(f"GET {endpoint}: HTTP {status}")
    try:
        return decode_json(answer.body, max_objects=MAX_OBJECTS)
    except BadJson as exc:
        raise BuildkiteError(f"GET {endpoint}: {exc}") from None


def _failure(exc: TransportError, seconds: float) -> str:
    """The layer's failure in this module's words."""
    if isinstance(exc, RedirectRefused):
        return f"a redirect (HTTP {exc.status}), not followed"
    if isinstance(exc, Unreachable):
        return f"{exc.reason} (Buildkite unreachable)"
    if isinstance(exc, Overdue):
        if exc.phase == "body":
            return f"no complete answer within {seconds:.0f} s"
        return f"no answer (status line and headers) within {seconds:g} s"
    return str(exc)


def _text(value: Any) -> str:
    return value[:MAX_FIELD] if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31
    return value if ok else None


def _build(item: Any, path: str) -> Build:
    if not isinstance(item, dict):
        raise BuildkiteError(f"GET {path}: expected builds as objects")
    number, jobs = _int(item.get("number")), item.get("jobs", [])
    if number is None or number < 0 or not isinstance(jobs, list):
        raise BuildkiteError(f"GET {path}: a build without a number or a list of jobs")
    if not all(isinstance(j, dict) for j in jobs):
        raise BuildkiteError(f"GET {path}: expected jobs as objects")
    return Build(
        number=number,
        state=_text(item.get("state")),
        commit=_text(item.get("commit")),
        url=_text(item.get("web_url")),
        jobs=tuple(_job(j) for j in jobs[:MAX_JOBS]),
    )


def _job(j: dict[str, Any]) -> BuildkiteJob:
    exit_status = j.get("exit_status")
    if isinstance(exit_status, str) and re.fullmatch(r"-?\d{1,6}", exit_status):
        exit_status = int(exit_status)  # older answers carried it as a string
    return BuildkiteJob(
        id=_text(j.get("id")),
        type=_text(j.get("type")),
        name=_text(j.get("name") or j.get("label")),
        state=_text(j.get("state")),
        exit_status=_int(exit_status),
        retried=j.get("retried") is True,
        retried_in_job_id=_text(j.get("retried_in_job_id")),
        retries_count=max(_int(j.get("retries_count")) or 0, 0),
        soft_failed=j.get("soft_failed") is True,
        step_key=_text(j.get("step_key")),
        group_key=_text(j.get("group_key")),
    )
