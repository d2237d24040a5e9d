"""A git smart-HTTP server over TLS on loopback (tests only): ``git http-backend`` run as CGI
behind python's http.server, answering only requests whose ``Authorization`` header is the one a
token should produce, and recording every request it saw (line and headers) and every CGI
environment it made. Skipped, with the reason, when ``git http-backend`` or ``openssl`` is absent."""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest


def backend() -> Path:
    """``git http-backend`` (in ``git --exec-path``), or the test is skipped."""
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout
    found = Path(exec_path.strip()) / "git-http-backend"
    if not found.is_file():
        pytest.skip(f"git http-backend is absent from {exec_path.strip()}: no smart-HTTP server to push to")
    return found


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by ``openssl`` (or the test is skipped)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is absent: no certificate for the https server")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def expected_header(token: str) -> str:
    return "basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


@dataclass
class SmartHTTP:
    """What the server saw: each request (line, headers) and each CGI run's environment;
    ``refused`` the requests answered 401."""

    url: str  # https://127.0.0.1:<port>
    cert: Path
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    cgi_envs: list[dict[str, str]] = field(default_factory=list)
    refused: int = 0


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        out = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return out
            out += handler.rfile.read(size)
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


@contextmanager
def smart_http(root: Path, token: str, certs: Path) -> Iterator[SmartHTTP]:
    """Serve the bare repositories under ``root`` (``/<name>.git``) over https on 127.0.0.1,
    pushes included, to requests carrying ``token``'s header only."""
    program = backend()
    cert, key = self_signed(certs)
    want = expected_header(token)
    seen = SmartHTTP(url="", cert=cert)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            self._cgi("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._cgi("POST")

        def _cgi(self, method: str) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.requests.append((self.requestline, headers))
            body = _body(self) if method == "POST" else b""
            if self.headers.get("Authorization") != want:
                seen.refused += 1
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            url = urlsplit(self.path)
            env = {
                "PATH": "/usr/bin:/bin",
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "REQUEST_METHOD": method,
                "PATH_INFO": url.path,
                "QUERY_STRING": url.query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": "x-access-token",  # authenticated: receive-pack is allowed
                "REMOTE_ADDR": "127.0.0.1",
                "GATEWAY_INTERFACE": "CGI/1.1",
                "SERVER_PROTOCOL": "HTTP/1.1",
            }
            for name in ("Git-Protocol", "Content-Encoding"):
                if self.headers.get(name):
                    env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
            seen.cgi_envs.append(env)
            done = subprocess.run([str(program)], input=body, env=env, capture_output=True, check=False)
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            if not _:
                head, _, payload = done.stdout.partition(b"\n\n")
            status, extra = 200, []
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    extra.append((name, value.strip()))
            self.send_response(status)
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    seen.url = f"https://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        httpd.shutdown()
        httpd.server_close()
