"""The one adapter to PyGithub: a ``Github`` built from its public arguments, its requests sent
through the one bounded HTTP layer (:mod:`vimesync.transport`).

What vimesync uses of PyGithub, all of it public:

- ``Github(auth=Auth.Token(...), base_url=, per_page=, timeout=, retry=None, pool_size=1,
  seconds_between_requests=None, seconds_between_writes=None, user_agent=)``: the token is only
  ever handed to ``Auth.Token``; ``retry=None`` because the retry loop is ours (see
  :mod:`vimesync.github.ratelimit`), no throttles because their waits are a real ``time.sleep``;
- ``Requester.graphql_url``: where the GraphQL mutations the bot sends go (beside the REST root);
- ``Github.requester`` ("to make requests to API endpoints not yet supported by PyGithub") and
  ``Requester.requestJson(verb, url, parameters, headers, input, cnx=...)``: one request, through
  the connection ``cnx`` names.

The bounds an answer needs cannot be had from PyGithub's own connection: its ``timeout`` bounds
each socket read (a server sending a byte a second never trips it), nothing bounds an answer's
size (its connection reads the whole body into memory), and PyGithub follows a 301 to any path
of the host as often as it is told. So the connection handed to each call through ``cnx`` is
ours, :class:`Connection`: it speaks what PyGithub asks of a connection (``request`` then
``getresponse``, an answer with ``status``, ``getheaders()`` and ``read()``) and sends through a
:class:`vimesync.transport.Channel`, which holds the exchange to the call's deadline, reads at
most :data:`MAX_BYTES`, and follows a redirect only to the same scheme, host and port, at most
:data:`MAX_REDIRECTS` times (so PyGithub never sees one). It belongs to one client: nothing is
swapped process-wide, as ``Requester.injectConnectionClasses`` would.

:data:`CHECKED_AGAINST` is the PyGithub version this module was last checked against;
``tests/test_github_pygithub.py`` fails when the installed one is newer, and :func:`missing_hooks`
(also run before the first client is built) names any hook above that is gone.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Mapping
from typing import Any

from vimesync.errors import GitHubError
from vimesync.transport import Answer, BadJson, Channel, TransferLimits, decode_json

CHECKED_AGAINST = "2.10.0"
MAX_BYTES = 32 * 1024 * 1024  # of one answer
MAX_REDIRECTS = 5
MAX_OBJECTS = 100_000  # JSON objects in one answer (a page of 100 check runs holds ~3,000)


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
    from github.Requester import Requester

    missing = []
    params = set(inspect.signature(Github.__init__).parameters)
    wanted = {"auth", "base_url", "per_page", "timeout", "retry", "pool_size", "user_agent"}
    wanted |= {"seconds_between_requests", "seconds_between_writes"}
    missing += [f"Github({p}=)" for p in sorted(wanted - params)]
    if not isinstance(getattr(Github, "requester", None), property):
        missing.append("Github.requester")
    if not isinstance(getattr(Requester, "graphql_url", None), property):
        missing.append("Requester.graphql_url")
    if "cnx" not in inspect.signature(Requester.requestJson).parameters:
        missing.append("Requester.requestJson(cnx=)")
    if not hasattr(Auth, "Token"):
        missing.append("Auth.Token")
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


class _Answer:
    """An answer as PyGithub reads one (http.client's names)."""

    def __init__(self, answer: Answer) -> None:
        self.status = answer.status
        self._answer = answer

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._answer.headers.items())

    def read(self) -> str:
        return self._answer.body.decode("utf-8", errors="replace")


class Connection:
    """The connection PyGithub is handed (``cnx``): each request one bounded exchange on the
    client's channel, before the deadline of the call in progress."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.deadline = float("inf")  # time.monotonic() after which nothing more is sent or read
        self._sent: tuple[str, str, Any, dict[str, str]] = ("GET", "/", None, {})

    def request(
        self, verb: str, url: str, input: Any, headers: Mapping[str, str], stream: bool = False
    ) -> None:
        self._sent = (verb, url, input, dict(headers))

    def getresponse(self) -> _Answer:
        verb, url, body, headers = self._sent
        return _Answer(self.channel.exchange(verb, url, deadline=self.deadline, headers=headers, body=body))

    def close(self) -> None:
        self.channel.close()


def _structured(output: str) -> Any:
    # As PyGithub reads an answer: empty is None, text that is not JSON is {"data": text}.
    if not output:
        return None
    try:
        return decode_json(output, max_objects=MAX_OBJECTS)
    except BadJson as exc:
        if exc.why != "syntax" or output.startswith(("{", "[")):
            raise
        return {"data": output}


class Session:
    """One client's PyGithub and its bounded connection; one call at a time."""

    def __init__(self, *, token: str | None, base_url: str, per_page: int, timeout: float) -> None:
        from github import Auth, Github

        _checked()
        limits = TransferLimits(
            max_bytes=MAX_BYTES, max_redirects=MAX_REDIRECTS, connect_timeout=timeout, read_timeout=timeout
        )
        self._cnx = Connection(Channel(base_url, limits=limits))
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url,
            per_page=per_page,
            retry=None,
            timeout=int(timeout),
            pool_size=1,
            seconds_between_requests=None,
            seconds_between_writes=None,
            user_agent="vimesync",
        )

    @property
    def base_url(self) -> str:
        return str(self._gh.requester.base_url)

    @property
    def graphql_url(self) -> str:
        return str(self._gh.requester.graphql_url)

    def start(self, seconds: float) -> None:
        """Give the call in progress ``seconds`` from now."""
        self._cnx.deadline = time.monotonic() + seconds

    def stop(self) -> None:
        self._cnx.deadline = float("inf")

    def request(
        self, verb: str, url: str, params: dict[str, Any], headers: dict[str, str], body: Any = None
    ) -> tuple[dict[str, Any], Any]:
        """One exchange: (headers, JSON or None for 304). Failure for an error status,
        :class:`vimesync.transport.TransportError` for a bound or an unreachable server;
        PyGithub's own exceptions (a 202 it gave up on) pass through."""
        cnx: Any = self._cnx  # PyGithub names its own classes; it calls request() and getresponse()
        status, resp_headers, output = self._gh.requester.requestJson(
            verb, url, params, dict(headers), body, cnx=cnx
        )
        data = _structured(output)
        if status >= 400:
            raise Failure(status, resp_headers, data)
        return resp_headers, data

    def close(self) -> None:
        """Release the connection."""
        self._cnx.close()
        self._gh.close()
