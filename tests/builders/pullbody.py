"""A GitHub stand-in for publishing a report: a real HTTP server on loopback serving one pull
request's JSON (GET/PATCH of its body), which starts with a human's text (tests only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "ghp_secret_token_value"
HUMAN = "Written by a human.\r\n\r\n- keep this\r\n"


class FakeGitHub:
    def __init__(self) -> None:
        self.body: str | None = HUMAN
        self.title = "Sync with upstream"  # as a maintainer opened it
        self.requests: list[tuple[str, str, dict | None]] = []
        self.auth: list[str | None] = []
        self.status = 200


@contextmanager
def serve_pull() -> Iterator[tuple[FakeGitHub, str]]:
    """Serve pull request 7 of vime/vime; yield its state and the server's base URL."""
    state = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, doc: dict) -> None:
            data = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _pull(self) -> dict:
            base = f"http://{self.headers['Host']}"
            return {
                "number": 7,
                "title": state.title,
                "state": "open",
                "body": state.body,
                "url": f"{base}/repos/vime/vime/pulls/7",
                "html_url": "https://github.com/vime/vime/pull/7",
            }

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            state.requests.append((method, self.path, payload))
            state.auth.append(self.headers.get("Authorization"))
            if state.status != 200:
                self._send(state.status, {"message": "Bad credentials"})
                return
            if self.path != "/repos/vime/vime/pulls/7":
                self._send(404, {"message": "Not Found"})
                return
            if method == "PATCH":
                state.body = payload["body"]
                state.title = payload.get("title", state.title)
            self._send(200, self._pull())

        def do_GET(self) -> None:
            self._handle("GET")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
