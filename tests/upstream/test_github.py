"""PyGithub against a real HTTP server on loopback serving GitHub-shaped JSON."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from vimesync.errors import GitHubError
from vimesync.upstream.github import GitHubClient, fetch_metadata

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
    }


class FakeGitHub:
    """Routes: the pulls list (newest first, paged), PR files; scripted failures; ETags."""

    def __init__(self, numbers: range) -> None:
        self.prs = [_pr(n, merged=n % 10 != 0) for n in sorted(numbers, reverse=True)]
        self.script: list[tuple[int, dict[str, str]]] = []  # responses served before the real one
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.queries: list[dict[str, list[str]]] = []

    def handle(
        self, path: str, query: dict[str, list[str]], headers: dict[str, str]
    ) -> tuple[int, dict, Any]:
        self.requests.append((path, headers))
        self.queries.append(query)
        if self.script:
            status, extra = self.script.pop(0)
            return status, extra, {"message": "API rate limit exceeded" if status in (403, 429) else "boom"}
        if path.endswith("/pulls"):
            per = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            body: Any = self.prs[(page - 1) * per : page * per]
        elif "/files" in path:
            body = [{"filename": "slime/a.py"}, {"filename": "docs/b.md"}]
        else:
            return 404, {}, {"message": "Not Found"}
        etag = f'W/"{hash(json.dumps(body)) & 0xFFFFFFFF:x}"'
        if headers.get("if-none-match") == etag:
            return 304, {"ETag": etag}, None
        return 200, {"ETag": etag}, body


@pytest.fixture
def server() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub(range(1, 251))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            url = urlparse(self.path)
            status, extra, body = fake.handle(
                url.path, parse_qs(url.query), {k.lower(): v for k, v in self.headers.items()}
            )
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _client(url: str, tmp_path: Path, **kw: Any) -> tuple[GitHubClient, list[float]]:
    slept: list[float] = []
    client = GitHubClient(
        "THUDM/slime", token=TOKEN, base_url=url, cache=tmp_path / "cache", sleep=slept.append, **kw
    )
    return client, slept


def test_pages_of_100_stop_at_the_oldest_wanted(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    client, _ = _client(url, tmp_path)
    got = client.merged_prs([121, 150, 240, 129])
    assert sorted(got) == [121, 129]  # multiples of 10 are closed without merge
    assert got[129].labels == ("npu",) and got[129].author == "user129" and got[129].title == "PR title 129"
    assert got[121].merge_commit == f"{121:040x}" and got[121].labels == ()
    assert len(fake.requests) == 2  # 250..151, 150..51: then past the oldest wanted
    assert all(q["per_page"] == ["100"] for q in fake.queries)
    assert fake.requests[0][1]["authorization"].endswith(TOKEN)  # sent to the server, and only there


def test_etag_cache_revalidates_with_304(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    first, _ = _client(url, tmp_path)
    a = first.merged_prs([240])
    second, _ = _client(url, tmp_path)
    b = second.merged_prs([240])
    assert a == b and second.not_modified == 1
    assert fake.requests[-1][1].get("if-none-match")
    cached = "".join(p.read_text() for p in (tmp_path / "cache").iterdir())
    assert TOKEN not in cached


def test_files_are_paged_too(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    _, url = server
    client, _ = _client(url, tmp_path)
    assert client.merged_prs([249], files=True)[249].files == ("slime/a.py", "docs/b.md")


@pytest.mark.parametrize("status", [429, 403])
def test_short_rate_limit_waits_then_retries(
    server: tuple[FakeGitHub, str], tmp_path: Path, status: int
) -> None:
    fake, url = server
    fake.script = [(status, {"Retry-After": "2"})]
    client, slept = _client(url, tmp_path)
    assert 249 in client.merged_prs([249])
    assert slept == [2.0]


def test_long_rate_limit_fails_clearly_without_sleeping(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.script = [(403, {"Retry-After": "3600"})]
    client, slept = _client(url, tmp_path, max_wait=30)
    with pytest.raises(GitHubError) as exc:
        client.merged_prs([249])
    assert "3600s" in exc.value.message and slept == []
    assert TOKEN not in exc.value.message + (exc.value.hint or "")


def test_rate_limit_reset_header(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    import time

    fake, url = server
    reset = str(int(time.time()) + 7200)
    fake.script = [(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})]
    client, slept = _client(url, tmp_path)
    with pytest.raises(GitHubError, match="rate limit"):
        client.merged_prs([249])
    assert slept == []


def test_plain_403_is_not_a_rate_limit(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.script = [(403, {})]
    client, slept = _client(url, tmp_path)
    with pytest.raises(GitHubError, match=r"refused .*\(403\)"):
        client.merged_prs([249])
    assert slept == []


def test_5xx_retried_a_bounded_number_of_times(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.script = [(502, {}), (503, {})]
    client, slept = _client(url, tmp_path, retries=3)
    assert 249 in client.merged_prs([249])
    assert len(slept) == 2 and all(s <= 4 for s in slept)

    fake.script = [(500, {})] * 5
    client, slept = _client(url, tmp_path / "other", retries=2)
    with pytest.raises(GitHubError, match="500"):
        client.merged_prs([249])
    assert len(slept) == 2


def test_unreachable_server(tmp_path: Path) -> None:
    client, _ = _client("http://127.0.0.1:9", tmp_path, timeout=2)
    with pytest.raises(GitHubError, match="cannot reach GitHub"):
        client.merged_prs([1])


def test_fetch_metadata_reads_the_token_from_the_environment(
    server: tuple[FakeGitHub, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, url = server
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    got = fetch_metadata("THUDM/slime", [249], base_url=url, cache=tmp_path / "c")
    assert got[249].title == "PR title 249"
    assert fake.requests[0][1]["authorization"] == f"token {TOKEN}"
