"""A loopback server speaking Buildkite's REST API for builds of a commit
(``GET /v2/organizations/{org}/pipelines/{pipeline}/builds?commit=SHA`` and ``.../builds/{number}``,
the documented shape:
https://buildkite.com/docs/apis/rest-api/builds), or whatever raw answer a test hands it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "bkua_test_token_never_printed"


def job(name: str, state: str = "passed", exit_status: int | None = 0, **extra: Any) -> dict[str, Any]:
    return {
        "id": extra.pop("id", name),
        "type": "script",
        "name": name,
        "state": state,
        "exit_status": exit_status,
        "retried": False,
        "retried_in_job_id": None,
        "retries_count": 0,
        **extra,
    }


def agent_lost_build(number: int, commit: str, passing: int = 48) -> dict[str, Any]:
    """``passing`` green jobs plus one lost with its agent (exit -1) that passed on its retry."""
    jobs = [job(f"CPU shard {i}", id=f"j{i}") for i in range(passing)]
    jobs.append(job("Qwen3 R3", "failed", -1, id="lost", retried=True, retried_in_job_id="retry"))
    jobs.append(job("Qwen3 R3", id="retry", retries_count=1))
    jobs.append({"id": "w", "type": "waiter", "state": "passed"})
    return {
        "number": number,
        "state": "passed",
        "commit": commit,
        "web_url": f"https://buildkite.com/vime/vime/builds/{number}",
        "jobs": jobs,
    }


def grouped_build(number: int, commit: str) -> dict[str, Any]:
    """Buildkite's shapes for steps in groups: 9 CPU checks (group ``cpu``, a step key each), 40
    GPU jobs (one parallel step ``gpu-e2e`` in group ``gpu``), one of them lost with its agent and
    passed on its retry; every job carries ``step_key`` and ``group_key`` as the API gives them."""
    jobs = [job(f"CPU check {i}", id=f"c{i}", step_key=f"cpu-{i}", group_key="cpu") for i in range(9)]
    gpu = {"step_key": "gpu-e2e", "group_key": "gpu"}
    jobs += [job(f"GPU e2e {i}", id=f"g{i}", **gpu) for i in range(39)]
    jobs.append(job("GPU e2e 39", "failed", -1, id="lost", retried=True, retried_in_job_id="retry", **gpu))
    jobs.append(job("GPU e2e 39", id="retry", retries_count=1, **gpu))
    jobs.append({"id": "w", "type": "waiter", "state": "passed"})
    return {
        "number": number,
        "state": "passed",
        "commit": commit,
        "web_url": f"https://buildkite.com/vime/vime/builds/{number}",
        "jobs": jobs,
    }


class FakeBuildkite:
    def __init__(self) -> None:
        self.builds: list[dict[str, Any]] = []
        self.raw: tuple[int, dict[str, str], bytes] | None = None  # answer every request with this
        self.requests: list[tuple[str, dict[str, list[str]], str]] = []  # path, query, auth

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        if self.raw is not None:
            return self.raw
        number = path.rsplit("/builds/", 1)[1] if "/builds/" in path else ""
        if number:  # GET .../builds/{number}
            found = [b for b in self.builds if str(b.get("number")) == number]
            if not found:
                return 404, {"Content-Type": "application/json"}, b'{"message": "No build found"}'
            return 200, {"Content-Type": "application/json"}, json.dumps(found[0]).encode()
        commit = query.get("commit", [""])[0]
        page = int(query.get("page", ["1"])[0])
        per = int(query.get("per_page", ["30"])[0])
        found = [b for b in self.builds if b.get("commit") == commit]
        body = json.dumps(found[(page - 1) * per : page * per]).encode()
        return 200, {"Content-Type": "application/json"}, body


@contextmanager
def serve(fake: FakeBuildkite) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            fake.requests.append((url.path, query, self.headers.get("Authorization", "")))
            status, headers, body = fake.answer(url.path, query)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
