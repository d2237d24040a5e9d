"""THE Buildkite choke point: the builds of one commit, read from Buildkite's REST API
(``GET /v2/organizations/{org}/pipelines/{pipeline}/builds?commit=SHA``), bounded as the GitHub
client is, with the standard library's ``http.client`` (one GET, no session, nothing cached):

- the token from ``BUILDKITE_API_TOKEN``, sent as ``Authorization: Bearer`` and never printed:
  no message here holds it or an answer's text;
- the API root from ``VIMESYNC_BUILDKITE_API`` (tests: a loopback server), else
  https://api.buildkite.com;
- every listing has an overall deadline (60 s): the status line and headers are awaited on a
  helper thread the caller stops waiting for at the deadline (a server trickling header bytes,
  each in time for the 30 s timeout of every socket read, would hold ``getresponse`` for ever),
  and the body's reads are checked against it (http.client caps a header's line and count); an answer is
  at most 16 MiB and 100,000 JSON objects; at most 10 pages of 100 builds are read; a redirect
  is never followed (the token stays with the API root);
- an answer of the wrong shape is a :class:`BuildkiteError` naming the endpoint; strings are cut
  at 1,024 characters (whoever writes a pipeline names its jobs: the renderers escape them).

Only plain records (:class:`Build`, :class:`Job`) leave this module."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from vimesync.errors import BuildkiteError

API_URL = "https://api.buildkite.com"
TOKEN_ENV = "BUILDKITE_API_TOKEN"
DEADLINE = 60.0
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
class Job:
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


@dataclass(frozen=True)
class Build:
    number: int
    state: str
    commit: str
    url: str
    jobs: tuple[Job, ...]


def token_from_env() -> str | None:
    return os.environ.get(TOKEN_ENV) or None


def api_url() -> str:
    return (os.environ.get("VIMESYNC_BUILDKITE_API") or API_URL).rstrip("/")


def check_pipeline(value: str, where: str) -> tuple[str, str]:
    """``org/pipeline`` -> (org, pipeline), both Buildkite slugs (BuildkiteError otherwise)."""
    org, sep, pipeline = value.partition("/")
    if not sep or not SLUG.fullmatch(org) or not SLUG.fullmatch(pipeline):
        raise BuildkiteError(f"{where} {value[:60]!r}: expected org/pipeline (Buildkite slugs)")
    return org, pipeline


def builds_of_commit(pipeline: str, sha: str, *, token: str, api: str | None = None) -> list[Build]:
    """Every build of ``pipeline`` (``org/pipeline``) for exactly the commit ``sha``, newest first."""
    org, name = check_pipeline(pipeline, "[ci] buildkite")
    if not _SHA.fullmatch(sha):
        raise BuildkiteError(f"{sha[:44]!r} is not a full commit sha")
    root = api or api_url()
    path = f"/v2/organizations/{quote(org)}/pipelines/{quote(name)}/builds"
    builds: list[Build] = []
    deadline = time.monotonic() + DEADLINE
    for page in range(1, MAX_PAGES + 1):
        query = urlencode({"commit": sha, "per_page": PER_PAGE, "page": page})
        data = _get(root, f"{path}?{query}", token, deadline)
        if not isinstance(data, list):
            raise BuildkiteError(f"GET {path}: expected a list of builds")
        builds += [_build(item, path) for item in data]
        if len(data) < PER_PAGE:
            return sorted((b for b in builds if b.commit == sha), key=lambda b: -b.number)
    raise BuildkiteError(f"GET {path}: more than {MAX_PAGES} pages of builds for one commit")


def _get(root: str, target: str, token: str, deadline: float) -> Any:
    where = urlsplit(root)
    if where.scheme not in ("http", "https") or not where.hostname:
        raise BuildkiteError("VIMESYNC_BUILDKITE_API must be an http(s) URL")
    conn_cls = http.client.HTTPSConnection if where.scheme == "https" else http.client.HTTPConnection
    endpoint = target.split("?", 1)[0]
    conn = conn_cls(where.hostname, where.port, timeout=READ_TIMEOUT)
    try:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": "vimesync"}
        resp = _headers_within(conn, where.path.rstrip("/") + target, headers, deadline, endpoint)
        if 300 <= resp.status < 400:
            raise BuildkiteError(f"GET {endpoint}: a redirect (HTTP {resp.status}), not followed")
        if resp.status in (401, 403):
            raise BuildkiteError(
                f"GET {endpoint}: HTTP {resp.status}: {TOKEN_ENV} was refused",
                hint="the token needs the read_builds scope for this organization",
            )
        if resp.status >= 400:
            raise BuildkiteError(f"GET {endpoint}: HTTP {resp.status}")
        body = _read(resp, endpoint, deadline)
    except (OSError, http.client.HTTPException) as exc:
        raise BuildkiteError(f"GET {endpoint}: {type(exc).__name__} (Buildkite unreachable)") from None
    finally:
        conn.close()
    if body.count(b"{") > MAX_OBJECTS:
        raise BuildkiteError(f"GET {endpoint}: an answer of more than {MAX_OBJECTS:,} JSON objects")
    try:
        return json.loads(body)
    except ValueError:
        raise BuildkiteError(f"GET {endpoint}: the answer is not JSON") from None


def _headers_within(
    conn: http.client.HTTPConnection, target: str, headers: dict[str, str], deadline: float, endpoint: str
) -> http.client.HTTPResponse:
    """Send the GET and read the status line and headers within the deadline
    (:func:`vimesync.deadline.call_within`), the socket shut down when it passes."""
    from vimesync.deadline import Overdue, call_within

    def send() -> http.client.HTTPResponse:
        conn.request("GET", target, headers=headers)
        return conn.getresponse()

    try:
        return call_within(send, deadline - time.monotonic(), name="buildkite-request")
    except Overdue:
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        raise BuildkiteError(
            f"GET {endpoint}: no answer (status line and headers) within {DEADLINE:g} s"
        ) from None


def _read(resp: http.client.HTTPResponse, endpoint: str, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := resp.read1(65536):
        size += len(chunk)
        if size > MAX_BYTES:
            raise BuildkiteError(f"GET {endpoint}: an answer larger than {MAX_BYTES // (1024 * 1024)} MiB")
        if time.monotonic() > deadline:
            raise BuildkiteError(f"GET {endpoint}: no complete answer within {DEADLINE:.0f} s")
        chunks.append(chunk)
    return b"".join(chunks)


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


def _job(j: dict[str, Any]) -> Job:
    exit_status = j.get("exit_status")
    if isinstance(exit_status, str) and re.fullmatch(r"-?\d{1,6}", exit_status):
        exit_status = int(exit_status)  # older answers carried it as a string
    return Job(
        id=_text(j.get("id")),
        type=_text(j.get("type")),
        name=_text(j.get("name") or j.get("label")),
        state=_text(j.get("state")),
        exit_status=_int(exit_status),
        retried=j.get("retried") is True,
        retried_in_job_id=_text(j.get("retried_in_job_id")),
        retries_count=max(_int(j.get("retries_count")) or 0, 0),
        soft_failed=j.get("soft_failed") is True,
    )
