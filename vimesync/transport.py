"""One bounded HTTP exchange: what GitHub (under PyGithub), Buildkite and the registry send and
read, through one :class:`Channel` per origin.

A server is not trusted to end anything, so every exchange has:

- one overall deadline covering the connection, the status line, the headers and the body: the
  exchange runs on a helper thread the caller stops waiting for at the deadline, and the socket
  it uses is shut down then, so a server trickling a byte every few seconds (each in time for
  the per-read timeout) cannot hold the caller nor leave the thread blocked;
- one size cap, counted as the body streams in (a declared ``Content-Length`` over it is
  refused before a byte is read);
- one redirect rule: followed only to the same scheme, host and port (no user info), at most
  :attr:`TransferLimits.max_redirects` times; anywhere else it is refused, so the credentials sent with
  a request (``Authorization``) never go elsewhere;
- errors (:class:`TransportError`) in our words only: never a header we sent (the token), never
  a byte the server sent (an exception's text may quote a bad status line), only the kind of
  failure;
- :func:`decode_json`: an answer decoded within bounds (JSON objects counted, nesting bounded to
  :data:`MAX_DEPTH` levels, whatever the caller's own stack depth).

The transport is ``requests`` (urllib3 below it): PyGithub uses it already, it keeps a connection
alive across pages, verifies TLS with its own certificate bundle and decodes gzip as it streams.
It runs with ``trust_env`` off, so no ``.netrc`` credentials or proxy variables apply (what the
job's environment may change is read in :mod:`vimesync.settings` only), without its retries and
without its redirects (ours are above). The socket of an exchange is known through urllib3's
documented connection classes (:func:`_adapter`), the one hook below ``requests`` that is used.
"""

from __future__ import annotations

import functools
import json
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

MIB = 1024 * 1024
CHUNK = 65536
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}

Phase = Literal["start", "headers", "body"]


class TransportError(Exception):
    """One exchange failed: a bound was hit or the server could not be read. The message is ours
    alone (no token, no text of the server's)."""


class BadAddress(TransportError):
    def __init__(self) -> None:
        super().__init__("not an http(s) URL with a host")


class Unreachable(TransportError):
    """No answer: refused, reset, unresolvable, a TLS failure, a per-read timeout, a broken
    answer. ``reason`` names the kind (``Connection refused``, ``SSLCertVerificationError``)."""

    def __init__(self, reason: str, *, reading: bool) -> None:
        super().__init__(f"{reason} ({'while reading the answer' if reading else 'unreachable'})")
        self.reason = reason
        self.reading = reading  # the status line and headers had arrived


class Overdue(TransportError):
    """The deadline passed: before the exchange began, awaiting the status line and headers, or
    reading the body."""

    TEXT = {
        "start": "no answer within the deadline",
        "headers": "no answer (status line and headers) within the deadline",
        "body": "no complete answer within the deadline",
    }

    def __init__(self, phase: Phase) -> None:
        super().__init__(self.TEXT[phase])
        self.phase = phase


class TooLarge(TransportError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"an answer larger than {size_text(limit)}")
        self.limit = limit


class RedirectRefused(TransportError):
    """A redirect to another origin (``elsewhere``), or one more than the limit."""

    def __init__(self, status: int, *, elsewhere: bool, limit: int) -> None:
        super().__init__(
            "a redirect to another host, not followed" if elsewhere else f"more than {limit} redirects"
        )
        self.status = status
        self.elsewhere = elsewhere
        self.limit = limit


class BadJson(TransportError):
    """An answer that is not JSON (``syntax``), holds more objects than allowed, or nests too deeply."""

    def __init__(self, why: Literal["syntax", "objects", "depth"], limit: int = 0) -> None:
        text = {
            "syntax": "the answer is not JSON",
            "objects": f"an answer of more than {limit:,} JSON objects",
            "depth": "an answer nested too deeply",
        }[why]
        super().__init__(text)
        self.why = why
        self.limit = limit


def size_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB else f"{limit:,} bytes"


@dataclass(frozen=True)
class TransferLimits:
    """The bounds of every exchange on one channel (``max_bytes`` may be lowered per exchange)."""

    max_bytes: int
    max_redirects: int = 0
    connect_timeout: float = 10.0  # seconds, and never past the deadline
    read_timeout: float = 30.0  # seconds for each socket read; the deadline bounds them all


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)  # names lower-cased
    body: bytes = b""


class Channel:
    """Exchanges with one origin (``scheme://host[:port]``), one at a time, on one connection
    kept alive between them. ``headers`` go with every request (the credentials: never shown)."""

    def __init__(
        self, root: str, *, limits: TransferLimits, headers: Mapping[str, str] | None = None
    ) -> None:
        import requests

        self.origin, self.prefix = _origin_of(root)
        self.limits = limits
        self._session = requests.Session()
        self._session.trust_env = False  # no .netrc credentials, no proxy from the environment
        self._session.headers["User-Agent"] = "vimesync"
        self._session.headers.update(headers or {})
        adapter = _adapter()()
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)

    def close(self) -> None:
        self._session.close()

    def exchange(
        self,
        method: str,
        path: str,
        *,
        deadline: float,
        headers: Mapping[str, str] | None = None,
        body: bytes | str | None = None,
        max_bytes: int | None = None,
    ) -> Answer:
        """``method path`` (from the origin: ``/v2/...?q=1``) answered before ``deadline`` (a
        :func:`time.monotonic` time), redirects followed by the rule above; any status is an
        answer. :class:`TransportError` otherwise."""
        limit = self.limits.max_bytes if max_bytes is None else max_bytes
        data = body.encode("utf-8") if isinstance(body, str) else body
        url = self.origin + path
        for _ in range(self.limits.max_redirects + 1):
            answer = self._within(_Exchange(method, url, dict(headers or {}), data, limit, deadline))
            location = answer.headers.get("location")
            if answer.status not in REDIRECTS or location is None:
                return answer
            url = self._follow(url, location, answer.status)
            if answer.status == 303 and method != "HEAD":
                method, data = "GET", None
        raise RedirectRefused(answer.status, elsewhere=False, limit=self.limits.max_redirects)

    def _follow(self, url: str, location: str, status: int) -> str:
        target = urljoin(url, location.strip())
        try:
            parts = urlsplit(target)
            same = _origin_of(target)[0] == self.origin and parts.username is None and parts.password is None
        except (BadAddress, ValueError):
            same = False
        if not same:
            raise RedirectRefused(status, elsewhere=True, limit=self.limits.max_redirects)
        return target

    def _within(self, ex: _Exchange) -> Answer:
        """One exchange on a helper thread, given up (its socket shut down) at the deadline."""
        left = ex.deadline - time.monotonic()
        if left <= 0:
            raise Overdue("start")
        worker = threading.Thread(target=ex.run, args=(self._session, self.limits), name="vimesync-http")
        worker.daemon = True  # a process exit does not wait for an exchange given up
        worker.start()
        worker.join(left)
        if worker.is_alive():
            phase = ex.phase  # read before the abandon: a socket shut down can end the headers early
            ex.abandon(worker)
            raise Overdue(phase)
        if ex.error is not None:
            raise ex.error
        assert ex.answer is not None
        return ex.answer


@dataclass
class _Exchange:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None
    limit: int
    deadline: float
    phase: Phase = "headers"
    answer: Answer | None = None
    error: BaseException | None = None  # raised in the caller's thread

    def run(self, session: Any, limits: TransferLimits) -> None:
        import requests

        connect = max(min(limits.connect_timeout, self.deadline - time.monotonic()), 0.001)
        try:
            try:
                resp = session.request(
                    self.method,
                    self.url,
                    headers=self.headers,
                    data=self.body,
                    timeout=(connect, limits.read_timeout),
                    allow_redirects=False,
                    stream=True,
                )
            except requests.RequestException as exc:
                raise Unreachable(cause_of(exc), reading=False) from None
            self.phase = "body"
            try:
                headers = {k.lower(): v for k, v in resp.headers.items()}
                skip = self.method == "HEAD" or (resp.status_code in REDIRECTS and "location" in headers)
                body = b"" if skip else self._read(resp, headers)
            except requests.RequestException as exc:
                raise Unreachable(cause_of(exc), reading=True) from None
            finally:
                resp.close()
            self.answer = Answer(resp.status_code, headers, body)
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc
        finally:
            _IN_USE.pop(threading.current_thread(), None)

    def _read(self, resp: Any, headers: Mapping[str, str]) -> bytes:
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            raise TooLarge(self.limit)
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_content(CHUNK):  # decoded (gzip) as it streams: the cap counts what we keep
            size += len(chunk)
            if size > self.limit:
                raise TooLarge(self.limit)
            if time.monotonic() > self.deadline:
                raise Overdue("body")
            chunks.append(chunk)
        return b"".join(chunks)

    def abandon(self, worker: threading.Thread) -> None:
        """Shut the exchange's socket down, so that the abandoned thread's blocked read ends."""
        sock = _IN_USE.pop(worker, None)
        if isinstance(sock, socket.socket):
            try:
                # socket.socket's own shutdown: an SSLSocket's would drop its TLS state while
                # the other thread is still reading through it.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass


# The socket each exchange's thread is using (connecting, sending or reading): the response's
# socket stays referenced here when urllib3 lets go of it (an answer that closes the connection).
_IN_USE: dict[threading.Thread, Any] = {}


@functools.cache
def _adapter() -> type:
    """A ``requests`` adapter (no retries) whose connections note their socket in :data:`_IN_USE`
    when they connect or send, through urllib3's connection classes (``ConnectionCls``)."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Noted:
        sock: Any

        def _new_conn(self) -> Any:  # the TCP socket, before TLS is negotiated over it
            sock = super()._new_conn()  # type: ignore[misc]
            _IN_USE[threading.current_thread()] = sock
            return sock

        def connect(self) -> None:
            super().connect()  # type: ignore[misc]
            _IN_USE[threading.current_thread()] = self.sock

        def request(self, *args: Any, **kwargs: Any) -> Any:
            if self.sock is not None:  # kept alive from an earlier exchange
                _IN_USE[threading.current_thread()] = self.sock
            return super().request(*args, **kwargs)  # type: ignore[misc]

    class NotedHTTP(Noted, HTTPConnection):
        pass

    class NotedHTTPS(Noted, HTTPSConnection):
        pass

    class HTTPPool(HTTPConnectionPool):
        ConnectionCls = NotedHTTP

    class HTTPSPool(HTTPSConnectionPool):
        ConnectionCls = NotedHTTPS

    class Adapter(HTTPAdapter):
        def __init__(self) -> None:
            super().__init__(pool_connections=1, pool_maxsize=1, max_retries=0)

        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}

    return Adapter


def _origin_of(root: str) -> tuple[str, str]:
    """(``scheme://host:port``, the path below it without a trailing slash) of an http(s) URL."""
    try:
        parts = urlsplit(root)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port that is no number
        raise BadAddress() from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise BadAddress()
    host = parts.hostname
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{port}", parts.path.rstrip("/")


def cause_of(exc: BaseException) -> str:
    """What went wrong, in words of our own: the first cause below ``requests`` and urllib3 that
    the standard library raised (the system's text for an OS error, else the exception's type),
    never an exception's message (it may quote what the server sent: a bad status line)."""
    seen: set[int] = set()
    while id(exc) not in seen and type(exc).__module__ not in ("builtins", "http.client", "socket", "ssl"):
        seen.add(id(exc))
        inner = next((a for a in exc.args if isinstance(a, BaseException)), None)
        reason = getattr(exc, "reason", None)
        context = None if exc.__suppress_context__ else exc.__context__
        nxt = inner or (reason if isinstance(reason, BaseException) else None) or exc.__cause__ or context
        if nxt is None:
            break
        exc = nxt
    if isinstance(exc, OSError) and not isinstance(exc, ssl.SSLError) and isinstance(exc.strerror, str):
        return exc.strerror  # the system's words: "Connection refused", "Name or service not known"
    return type(exc).__name__


MAX_DEPTH = 64  # JSON nesting: GitHub, Buildkite and registry answers nest under 10 levels


def decode_json(body: bytes | str, *, max_objects: int, max_depth: int = MAX_DEPTH) -> Any:
    """``body`` as JSON: at most ``max_objects`` objects (32 MiB of tiny objects parse into
    gigabytes of dicts; a "{" in a string counts too) and ``max_depth`` levels (ours: json's
    scanner stops only at the recursion limit left to the caller). :class:`BadJson` otherwise."""
    brace: Any = b"{" if isinstance(body, bytes) else "{"
    if body.count(brace) > max_objects:
        raise BadJson("objects", max_objects)
    try:
        data = json.loads(body)
    except RecursionError:  # a bomb of nested arrays: no object to count, still too deep
        raise BadJson("depth", max_depth) from None
    except ValueError:
        raise BadJson("syntax") from None
    level, depth = ([data] if isinstance(data, (dict, list)) else []), 0
    while level:  # one level of containers at a time: linear, no recursion of our own
        depth += 1
        if depth > max_depth:
            raise BadJson("depth", max_depth)
        children = (c for v in level for c in (v.values() if isinstance(v, dict) else v))
        level = [c for c in children if isinstance(c, (dict, list))]
    return data
