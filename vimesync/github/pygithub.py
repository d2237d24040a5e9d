"""The one adapter to PyGithub: a ``Github`` built from its public arguments, and the bounds on
what is read.

What vimesync uses of PyGithub, all of it public:

- ``Github(auth=Auth.Token(...), base_url=, per_page=, timeout=, retry=None, pool_size=1,
  seconds_between_requests=None, seconds_between_writes=None, user_agent=)``: the token is only
  ever handed to ``Auth.Token``; ``retry=None`` because the retry loop is ours (see
  :mod:`vimesync.github.ratelimit`), no throttles because their waits are a real ``time.sleep``;
- ``Github.requester`` ("to make requests to API endpoints not yet supported by PyGithub") and
  ``Requester.requestJson(verb, url, parameters, headers, input, cnx=...)``: one request, through
  the connection ``cnx`` names.

The bounds an answer needs cannot be had from that API: ``timeout`` bounds each socket read (a
server sending a byte a second never trips it), nothing bounds an answer's size (the requests
connection reads the whole body into memory; ``getStream`` too, as its connection ignores
``stream``), and PyGithub follows a 301 to any path of the host as often as it is told. So the
narrowest hook is kept, here only: :class:`BoundedConnection`, a subclass of PyGithub's own
connection class whose ``getresponse`` reads with an overall deadline, at most
:data:`MAX_BYTES`, and follows redirects only to the same scheme, host and port, at most
:data:`MAX_REDIRECTS` times. It is handed to each call through the public ``cnx`` argument and
belongs to one client (nothing is swapped process-wide, as ``Requester.injectConnectionClasses``
would).

:data:`CHECKED_AGAINST` is the PyGithub version this module was last checked against;
``tests/test_github_pygithub.py`` fails when the installed one is newer, and :func:`missing_hooks`
(also run before the first client is built) names any hook above that is gone.
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from vimesync.errors import GitHubError

CHECKED_AGAINST = "2.10.0"
MAX_BYTES = 32 * 1024 * 1024  # of one answer
MAX_REDIRECTS = 5
MAX_OBJECTS = 100_000  # JSON objects in one answer (a page of 100 check runs holds ~3,000)


class Abort(Exception):
    """A bound was hit inside one HTTP exchange (message without the token or the answer)."""


class Failure(Exception):
    """GitHub answered with an error status (>= 400); what vimesync needs of the answer."""

    def __init__(self, status: int, headers: dict[str, Any], data: Any) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.data = data


def missing_hooks() -> list[str]:
    """The public PyGithub names and parameters this module relies on that the installed PyGithub lacks."""
    from github import Auth, Github
    from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester

    missing = []
    params = set(inspect.signature(Github.__init__).parameters)
    wanted = {"auth", "base_url", "per_page", "timeout", "retry", "pool_size", "user_agent"}
    wanted |= {"seconds_between_requests", "seconds_between_writes"}
    missing += [f"Github({p}=)" for p in sorted(wanted - params)]
    if not isinstance(getattr(Github, "requester", None), property):
        missing.append("Github.requester")
    if "cnx" not in inspect.signature(Requester.requestJson).parameters:
        missing.append("Requester.requestJson(cnx=)")
    if not hasattr(Auth, "Token"):
        missing.append("Auth.Token")
    for cls in (HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass):
        init = set(inspect.signature(cls.__init__).parameters)
        missing += [
            f"{cls.__name__}({p}=)"
            for p in ("host", "port", "timeout", "retry", "pool_size")
            if p not in init
        ]
    return missing


@functools.cache
def _checked() -> None:
    missing = missing_hooks()
    if missing:
        from importlib.metadata import version

        raise GitHubError(
            f"PyGithub {version('PyGithub')} lacks what vimesync uses: {', '.join(missing)}",
            hint=f"install PyGithub {CHECKED_AGAINST} (the version vimesync was checked against)",
        )


@functools.cache
def _bounded_class(scheme: str) -> type:
    """PyGithub's requests-based connection class for ``scheme``, reading within the bounds."""
    from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, RequestsResponse

    base = HTTPSRequestsConnectionClass if scheme == "https" else HTTPRequestsConnectionClass

    class Bounded(base):  # type: ignore[valid-type,misc]
        deadline = float("inf")  # time.monotonic() after which no more is read or sent
        redirects = 0

        def getresponse(self) -> Any:
            if time.monotonic() > self.deadline:
                raise Abort("no answer within the deadline")
            r = self._headers_within_deadline()
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
                        raise Abort(f"an answer larger than {MAX_BYTES // (1024 * 1024)} MiB")
                    if time.monotonic() > self.deadline:
                        raise Abort("no complete answer within the deadline")
                    chunks.append(chunk)
                r._content = b"".join(chunks)
            finally:
                r.close()
            return RequestsResponse(r)

        def _headers_within_deadline(self) -> Any:
            """The status line and headers, within the deadline: requests bounds each socket
            read (``timeout``), so a server trickling header bytes held a call forever. The
            exchange runs in a helper thread the caller stops waiting for at the deadline (the
            thread ends at its next read timeout; a process exit does not wait for it)."""
            from vimesync.deadline import Overdue, call_within

            def send() -> Any:
                return self.session.request(
                    self.verb,
                    f"{self.protocol}://{self.host}:{self.port}{self.url}",
                    headers=self.headers,
                    data=self.input,
                    timeout=self.timeout,  # for the connection and each read
                    verify=self.verify,
                    allow_redirects=False,
                    stream=True,
                )

            left = self.deadline - time.monotonic()
            try:
                return call_within(send, None if left == float("inf") else left, name="github-request")
            except Overdue:
                raise Abort("no answer (status line and headers) within the deadline") from None

        def _check_redirect(self, location: str) -> None:
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
                raise Abort("a redirect to another host (not followed: the token stays with GitHub)")
            self.redirects += 1
            if self.redirects > MAX_REDIRECTS:
                raise Abort(f"more than {MAX_REDIRECTS} redirects")

    return Bounded


def _structured(output: str) -> Any:
    # As PyGithub reads an answer: empty is None, text that is not JSON is {"data": text}.
    if not output:
        return None
    # Bytes are capped (MAX_BYTES), but 32 MiB of tiny objects parse into gigabytes of dicts: an
    # answer announcing more objects (an upper bound: a "{" in a string counts too) is refused.
    if output.count("{") > MAX_OBJECTS:
        raise Abort(f"an answer of more than {MAX_OBJECTS:,} JSON objects")
    try:
        return json.loads(output)
    except ValueError:
        if output.startswith(("{", "[")):
            raise
        return {"data": output}


class Session:
    """One client's PyGithub and its bounded connection; one call at a time."""

    def __init__(self, *, token: str | None, base_url: str, per_page: int, timeout: int) -> None:
        from github import Auth, Github

        _checked()
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url,
            per_page=per_page,
            retry=None,
            timeout=timeout,
            pool_size=1,
            seconds_between_requests=None,
            seconds_between_writes=None,
            user_agent="vimesync",
        )
        where = urlsplit(base_url)
        self._cnx: Any = _bounded_class(where.scheme)(
            where.hostname or "", where.port, timeout=timeout, retry=None, pool_size=1
        )

    @property
    def base_url(self) -> str:
        return str(self._gh.requester.base_url)

    def start(self, seconds: float, *, redirects: bool = True) -> None:
        """Give the call in progress ``seconds`` from now; a new call also starts its redirect count."""
        self._cnx.deadline = time.monotonic() + seconds
        if redirects:
            self._cnx.redirects = 0

    def stop(self) -> None:
        self._cnx.deadline = float("inf")

    def request(
        self, verb: str, url: str, params: dict[str, Any], headers: dict[str, str], body: Any = None
    ) -> tuple[dict[str, Any], Any]:
        """One exchange: (headers, JSON or None for 304). Failure for an error status, Abort for a
        bound; requests' own exceptions (connection refused, timeouts) and PyGithub's (a bad 301)
        pass through."""
        status, resp_headers, output = self._gh.requester.requestJson(
            verb, url, params, dict(headers), body, cnx=self._cnx
        )
        data = _structured(output)
        if status >= 400:
            raise Failure(status, resp_headers, data)
        return resp_headers, data

    def close(self) -> None:
        """Release the connection pools."""
        self._cnx.close()
        self._gh.close()
