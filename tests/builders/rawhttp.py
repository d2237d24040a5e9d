"""A raw HTTP server on loopback whose answers are bytes and pauses (tests only): a status line
trickled a byte at a time, headers that never end, a body over any cap, a redirect anywhere. It
records every request it was sent (its head: the request line and headers), so a test can show
that a token went nowhere else."""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

# What the server sends for one request: bytes, or a pause in seconds between them.
Part = bytes | float
Answer = Callable[[str], Sequence[Part]]


def reply(
    status: int, headers: dict[str, str] | None = None, body: bytes = b"", *, length: bool = True
) -> bytes:
    """A whole answer; ``length``: with a Content-Length (else the body ends with the connection)."""
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def trickled(data: bytes, pause: float = 0.05) -> list[Part]:
    """``data`` a byte at a time, ``pause`` seconds apart: each read in time for any socket timeout."""
    out: list[Part] = []
    for i in range(len(data)):
        out += [data[i : i + 1], pause]
    return out


def endless(prefix: bytes, pause: float = 0.05, count: int = 400) -> list[Part]:
    """``prefix``, then a byte every ``pause`` seconds, ``count`` times (20 s by default)."""
    return [prefix, *trickled(b"a" * count, pause)]


def gzipped(size: int) -> bytes:
    """``size`` zero bytes, gzipped (a few KiB on the wire)."""
    return gzip.compress(b"\0" * size)


@dataclass
class RawServer:
    url: str
    answer: Answer
    requests: list[str] = field(default_factory=list)  # each request's head, as sent
    bodies: list[bytes] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def _read_request(conn: socket.socket) -> tuple[str, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    text = head.decode("latin-1")
    length = next(
        (
            int(line.split(":", 1)[1])
            for line in text.split("\r\n")
            if line.lower().startswith("content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return text, body


@contextmanager
def raw_server(answer: Answer) -> Iterator[RawServer]:
    """Serve ``answer(request head)`` on 127.0.0.1, one connection per request (the server
    closes it after each answer)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = threading.Event()
    server = RawServer(f"http://127.0.0.1:{listener.getsockname()[1]}", answer)

    def handle(conn: socket.socket) -> None:
        try:
            head, body = _read_request(conn)
            if not head:
                return
            server.requests.append(head)
            server.bodies.append(body)
            for part in server.answer(head):
                if isinstance(part, float):
                    if stop.wait(part):
                        return
                else:
                    conn.sendall(part)
        except OSError:
            pass  # the client gave up (its socket shut down at its deadline), as it should
        finally:
            conn.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield server
    finally:
        stop.set()
        listener.close()
