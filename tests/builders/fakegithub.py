"""A GitHub stand-in on loopback: a real HTTP server serving GitHub-shaped JSON (tests only)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TOKEN = "ghp_secret_token_value_123"


def _pr(n: int, merged: bool = True) -> dict[str, Any]:
    return {
        "number": n,
        "title": f"PR title {n}",
        "labels": [{"name": "npu"}] if n % 3 == 0 else [],
        "user": {"login": f"user{n}"},
        "merge_commit_sha": f"{n:040x}",
        "merged_at": "2026-01-01T00:00:00Z" if merged else None,
        "state": "closed",
        "head": {"ref": f"feature-{n}", "sha": f"{n:040x}"},
        "base": {"ref": "main"},
    }


class FakeGitHub:
    """Routes: the pulls list (newest first, paged), an empty issues list, PR files, one PR (GET,
    PATCH of its body);
    scripted failures; ETags."""

    def __init__(self, numbers: range) -> None:
        self.prs = [_pr(n, merged=n % 10 != 0) for n in sorted(numbers, reverse=True)]
        self.bodies: dict[int, str | None] = {}  # PR descriptions (None: empty)
        # responses served before the real one; a status 0 lets that request have the real one
        self.script: list[tuple[int, dict[str, str]]] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.queries: list[dict[str, list[str]]] = []
        self.patches: list[tuple[str, Any]] = []  # (path, JSON payload) of each PATCH that succeeded
        # Misbehaviour, for the client's bounds:
        self.trickle: float | None = None  # seconds between the bytes of each answer
        self.redirect: str | None = None  # answer everything with a 301 to this Location
        self.lists: Any = None  # served where a list belongs (an object, a list of strings...)
        self.endless = False  # the pulls list never reaches an old PR: page after full page
        # CI results per commit sha, and pull requests' heads and commits (for ``vimesync ci``):
        self.statuses: dict[str, list[dict[str, Any]]] = {}
        self.check_runs: dict[str, list[dict[str, Any]]] = {}
        self.heads: dict[int, str] = {}
        self.pr_commits: dict[int, list[str]] = {}
        # One PR's state fields (state, merged, merge_commit_sha, title), for ``pin radar``;
        # a number in ``missing`` is 404 (an issue, or no such PR).
        self.pull_states: dict[int, dict[str, Any]] = {}
        self.missing: set[int] = set()
        # GitHub Actions' workflow runs per head sha (``GET /repos/o/r/actions/runs?head_sha=``):
        # each names its workflow (``name``) and its check suite (``check_suite_id``).
        self.workflow_runs: dict[str, list[Any]] | None = {}  # None: the route answers 404

    def handle(
        self,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        method: str = "GET",
        payload: Any = None,
    ) -> tuple[int, dict, Any]:
        self.requests.append((path, headers))
        self.queries.append(query)
        status, extra = self.script.pop(0) if self.script else (0, {})
        if status:  # 0: this request gets the real answer
            return status, extra, {"message": "API rate limit exceeded" if status in (403, 429) else "boom"}
        misbehaving = self._misbehave(path, query)
        if misbehaving is not None:
            return misbehaving
        per = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        commit = re.fullmatch(r"/repos/[^/]+/[^/]+/commits/([0-9a-f]+)/(status|check-runs)", path)
        pr_commits = re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/([0-9]+)/commits", path)
        one = re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/([0-9]+)", path)
        if path.endswith("/actions/runs") and method == "GET":
            return self._workflow_runs(query, page, per)
        if commit and method == "GET":
            sha, what = commit[1], commit[2]
            items = (self.statuses if what == "status" else self.check_runs).get(sha, [])
            key = "statuses" if what == "status" else "check_runs"
            body = {"sha": sha, "total_count": len(items), key: items[(page - 1) * per : page * per]}
            if what == "status":
                body["state"] = "pending"
        elif pr_commits and method == "GET":
            shas = self.pr_commits.get(int(pr_commits[1]), [])
            body = [{"sha": s} for s in shas[(page - 1) * per : page * per]]
        elif one and int(one[1]) in self.missing:
            return 404, {}, {"message": "Not Found"}
        elif one:
            n = int(one[1])
            if method == "PATCH":
                self.patches.append((path, payload))
                self.bodies[n] = payload["body"]
            body: Any = {
                "number": n,
                "body": self.bodies.get(n),
                "html_url": f"https://github.com{path.replace('/repos', '', 1).replace('/pulls/', '/pull/')}",
                "head": {"sha": self.heads.get(n, "f" * 40)},
                **self.pull_states.get(n, {}),
            }
        elif method != "GET":
            return 404, {}, {"message": "Not Found"}
        elif path.endswith("/pulls"):
            body = self.prs[(page - 1) * per : page * per]
        elif path.endswith("/issues"):
            body = []  # no issue carries a label here (the sync bot's one listing finds none)
        elif "/files" in path:
            body = [{"filename": "slime/a.py"}, {"filename": "docs/b.md"}]
        else:
            return 404, {}, {"message": "Not Found"}
        etag = f'W/"{hash(json.dumps(body)) & 0xFFFFFFFF:x}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return 200, {"ETag": etag}, body

    def _misbehave(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict, Any] | None:
        """The scripted misbehaviour's answer, if one applies."""
        if self.redirect is not None:
            return 301, {"Location": self.redirect}, {"message": "Moved Permanently"}
        if self.lists is not None and (path.endswith("/pulls") or path.endswith("/files")):
            return 200, {}, self.lists
        if self.endless and path.endswith("/pulls"):
            page = int(query.get("page", ["1"])[0])
            first = 10**6 * page
            next_page = f'<http://127.0.0.1/repos/o/r/pulls?page={page + 1}>; rel="next"'
            return 200, {"Link": next_page}, [_pr(n) for n in range(first + 100, first, -1)]
        return None

    def _workflow_runs(self, query: dict[str, list[str]], page: int, per: int) -> tuple[int, dict, Any]:
        if self.workflow_runs is None:
            return 404, {}, {"message": "Not Found"}
        items = self.workflow_runs.get(query.get("head_sha", [""])[0], [])
        return 200, {}, {"total_count": len(items), "workflow_runs": items[(page - 1) * per : page * per]}


@contextmanager
def serve(fake: Any) -> Iterator[str]:
    """Serve ``fake`` (anything with FakeGitHub's ``handle``) on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self._answer("GET")

        def do_PATCH(self) -> None:  # noqa: N802
            self._answer("PATCH")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def _answer(self, method: str) -> None:
            url = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            status, extra, body = fake.handle(
                url.path,
                parse_qs(url.query),
                {k.lower(): v for k, v in self.headers.items()},
                method,
                payload,
            )
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            if getattr(fake, "trickle", None) is None:
                self.wfile.write(data)
                return
            try:
                for i in range(len(data)):  # one byte at a time: each read is quick, the whole never
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(fake.trickle)
            except OSError:
                pass  # the client gave up, as it should

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
