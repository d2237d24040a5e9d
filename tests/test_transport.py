"""The one bounded HTTP layer (vimesync/transport.py) against real loopback servers: one deadline
over the connection, status line, headers and body; one size cap; one redirect rule; errors with
neither the token nor the server's text. Then the same bounds through each of its three clients:
GitHub (under PyGithub), Buildkite and the registry."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.builders.rawhttp import Part, endless, gzipped, raw_server, reply, trickled
from vimesync import transport
from vimesync.errors import BuildkiteError, GitHubError, RegistryError, VimesyncError
from vimesync.transport import (
    BadAddress,
    BadJson,
    Channel,
    Overdue,
    RedirectRefused,
    TooLarge,
    TransferLimits,
    Unreachable,
    decode_json,
)

TOKEN = "tok_secret_never_shown_123"
SERVER_TEXT = "SERVER-SAYS-\x1b[2J-this"  # what a server may put in a bad status line or body
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _channel(url: str, **limits: int | float) -> Channel:
    limits.setdefault("max_bytes", 64 * 1024)
    return Channel(url, limits=TransferLimits(**limits), headers=AUTH)  # type: ignore[arg-type]


def _get(channel: Channel, path: str = "/x", seconds: float = 0.6, **kw: object) -> transport.Answer:
    try:
        return channel.exchange("GET", path, deadline=time.monotonic() + seconds, **kw)  # type: ignore[arg-type]
    finally:
        channel.close()


def _exchange_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "vimesync-http"]


def _clean(exc: pytest.ExceptionInfo[Exception]) -> str:
    text = str(exc.value)
    assert TOKEN not in text and "SERVER-SAYS" not in text and "\x1b" not in text
    return text


def test_an_answer_within_the_bounds() -> None:
    with raw_server(lambda _: [reply(200, {"ETag": '"e"'}, b'{"a": 1}')]) as server:
        answer = _get(_channel(server.url), "/v2/x?q=1")
    assert (answer.status, answer.headers["etag"], answer.body) == (200, '"e"', b'{"a": 1}')
    assert server.requests[0].startswith("GET /v2/x?q=1 HTTP/1.1")
    assert f"Authorization: Bearer {TOKEN}" in server.requests[0]


TRICKLES: dict[str, tuple[list[Part], str]] = {
    # each byte in time for any per-read timeout; the whole never within the deadline
    "status line": (trickled(b"HTTP/1.1 200 OK\r\n", 0.1), "headers"),
    "headers": (endless(b"HTTP/1.1 200 OK\r\nX-Slow: "), "headers"),
    "body": (endless(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"), "body"),
    "no answer at all": ([30.0], "headers"),
}


@pytest.mark.parametrize("what", TRICKLES)
def test_a_trickle_meets_the_one_deadline(what: str) -> None:
    parts, phase = TRICKLES[what]
    with raw_server(lambda _: parts) as server:
        started = time.monotonic()
        with pytest.raises(Overdue) as exc:
            _get(_channel(server.url, read_timeout=5.0), seconds=0.6)
        took = time.monotonic() - started
    assert exc.value.phase == phase and took < 1.5
    assert _clean(exc).startswith("no answer" if phase == "headers" else "no complete answer")
    # The exchange given up has its socket shut down: its thread does not linger on the trickle.
    for _ in range(50):
        if not _exchange_threads():
            break
        time.sleep(0.02)
    assert not _exchange_threads()


def test_a_deadline_already_passed_sends_nothing() -> None:
    with raw_server(lambda _: [reply(200)]) as server:
        with pytest.raises(Overdue) as exc:
            _get(_channel(server.url), seconds=-1)
    assert exc.value.phase == "start" and server.requests == []


@pytest.mark.parametrize(
    "answer",
    [
        reply(200, body=b"x" * (64 * 1024 + 1), length=False),  # streamed: counted as it comes
        reply(200, {"Content-Length": str(10**9)}, length=False),  # declared: refused unread
        reply(200, {"Content-Encoding": "gzip"}, gzipped(8 * 1024 * 1024)),  # counted decoded
    ],
    ids=["streamed", "declared", "gzip"],
)
def test_an_answer_over_the_cap_is_cut_off(answer: bytes) -> None:
    with raw_server(lambda _: [answer]) as server:
        with pytest.raises(TooLarge) as exc:
            _get(_channel(server.url))
    assert _clean(exc) == "an answer larger than 65,536 bytes"


def test_a_lower_cap_for_one_exchange() -> None:
    with raw_server(lambda _: [reply(200, body=b"x" * 2000)]) as server:
        channel = _channel(server.url)
        assert len(channel.exchange("GET", "/", deadline=time.monotonic() + 2).body) == 2000
        with pytest.raises(TooLarge):
            _get(channel, max_bytes=1000)


@pytest.mark.parametrize("where", ["another port", "another host", "another scheme", "user info"])
def test_a_redirect_elsewhere_is_refused_and_the_token_goes_nowhere(where: str) -> None:
    with raw_server(lambda _: [reply(200)]) as other:
        port = other.url.rsplit(":", 1)[1]
        target = {
            "another port": f"{other.url}/steal",
            "another host": f"http://localhost:{port}/steal",
            "another scheme": "",  # filled below: https on the same host and port
            "user info": "",
        }[where]
        with raw_server(lambda _: [reply(302, {"Location": target})]) as server:
            if where == "another scheme":
                target = server.url.replace("http://", "https://") + "/steal"
            if where == "user info":
                target = server.url.replace("http://", "http://u:p@") + "/steal"
            with pytest.raises(RedirectRefused) as exc:
                _get(_channel(server.url, max_redirects=5))
    assert exc.value.elsewhere and _clean(exc) == "a redirect to another host, not followed"
    assert len(server.requests) == 1 and other.requests == []


def test_a_same_origin_redirect_is_followed_with_the_token() -> None:
    def answer(head: str) -> list[Part]:
        if head.startswith("GET /final"):
            return [reply(200, body=b"here")]
        return [reply(301, {"Location": "/final?page=2"})]

    with raw_server(answer) as server:
        assert _get(_channel(server.url, max_redirects=1)).body == b"here"
    assert [r.split(" ")[1] for r in server.requests] == ["/x", "/final?page=2"]
    assert all(f"Bearer {TOKEN}" in r for r in server.requests)


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_same_origin_redirects_are_followed_at_most_n_times(limit: int) -> None:
    with raw_server(lambda head: [reply(307, {"Location": head.split(" ")[1]})]) as server:
        with pytest.raises(RedirectRefused) as exc:
            _get(_channel(server.url, max_redirects=limit))
    assert not exc.value.elsewhere and _clean(exc) == f"more than {limit} redirects"
    assert len(server.requests) == limit + 1


def test_a_303_is_followed_with_a_get_and_no_body() -> None:
    def answer(head: str) -> list[Part]:
        return [reply(200, body=b"ok")] if head.startswith("GET") else [reply(303, {"Location": "/done"})]

    with raw_server(answer) as server:
        channel = _channel(server.url, max_redirects=1)
        answered = channel.exchange("PATCH", "/x", deadline=time.monotonic() + 2, body='{"body": "é"}')
        channel.close()
    assert answered.body == b"ok" and server.bodies == ['{"body": "é"}'.encode(), b""]
    assert server.requests[1].startswith("GET /done ")


@pytest.mark.parametrize(
    "parts",
    [
        [f"HTTP/1.1 {SERVER_TEXT} {TOKEN}\r\n\r\n".encode()],  # a status line of the server's words
        [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + SERVER_TEXT.encode()],  # cut short
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz" + SERVER_TEXT.encode() + b"\r\n"],
    ],
    ids=["bad status line", "short body", "bad chunk"],
)
def test_a_broken_answer_is_named_in_our_words(parts: list[Part]) -> None:
    with raw_server(lambda _: parts) as server:
        with pytest.raises(Unreachable) as exc:
            _get(_channel(server.url))
    _clean(exc)


def test_an_unreachable_server_is_one_error() -> None:
    with pytest.raises(Unreachable) as exc:
        _get(_channel("http://127.0.0.1:9"))
    assert str(exc.value) == "Connection refused (unreachable)"


@pytest.mark.parametrize("root", ["ftp://h/x", "http://", "https://h:port/", "h:80", ""])
def test_a_root_that_is_no_http_url_is_refused(root: str) -> None:
    with pytest.raises(BadAddress):
        Channel(root, limits=TransferLimits(max_bytes=1))


@pytest.mark.parametrize(
    "body, why",
    [
        (b"[" + b"{}," * 11 + b"{}]", "objects"),
        (b"[" * 100_000 + b"]" * 100_000, "depth"),
        (b"<html>", "syntax"),
        (b"\xff\xfe\x00", "syntax"),
    ],
)
def test_json_is_decoded_within_bounds(body: bytes, why: str) -> None:
    with pytest.raises(BadJson) as exc:
        decode_json(body, max_objects=10)
    assert exc.value.why == why
    assert decode_json(b'[{"a": [1]}]', max_objects=10) == [{"a": [1]}]


@pytest.mark.parametrize("depth", [65, 900, 990])
def test_json_nesting_is_bounded_by_our_limit_not_the_callers_stack(depth: int) -> None:
    """Under the interpreter's limit json's scanner parses 990 levels, and whoever walks the
    answer afterwards recursed into a RecursionError: the layer refuses past 64, at any stack
    depth of its caller, arrays and objects alike."""
    arrays = b"[" * depth + b"]" * depth
    objects = b'{"a":' * depth + b"1" + b"}" * depth
    for body in (arrays, objects, b'[{"jobs": ' + arrays + b"}]"):
        with pytest.raises(BadJson) as exc:
            decode_json(body, max_objects=10_000)
        assert exc.value.why == "depth" and str(exc.value) == "an answer nested too deeply"
    assert decode_json(b"[" * 64 + b"]" * 64, max_objects=10) is not None  # 64 levels are fine


# --- the three clients, through the one layer ---------------------------------------------------

SHA = "f" * 40
CAP = 64 * 1024
BIG = b'{"x": "' + b"y" * (2 * CAP) + b'"}'
DIGEST = "sha256:" + "1" * 64


def _github(url: str, tmp_path: Path) -> None:
    from vimesync.github import GitHubClient, WaitBudget
    from vimesync.settings import GitHubSettings

    settings = GitHubSettings(token=TOKEN, api=url, deadline=1.0, cache=tmp_path / "cache")
    client = GitHubClient("o/r", settings, wait_budget=WaitBudget(0))
    try:
        client.pull_request(7)
    finally:
        client.close()


def _buildkite(url: str, tmp_path: Path) -> None:
    from vimesync.buildkite import builds_of_commit
    from vimesync.settings import BuildkiteSettings

    builds_of_commit("o/p", SHA, BuildkiteSettings(token=TOKEN, api=url, deadline=1.0))


def _registry(url: str, tmp_path: Path) -> None:
    from vimesync.registry import verify_image
    from vimesync.settings import RegistrySettings

    settings = RegistrySettings(token=TOKEN, insecure=True, deadline=1.0)
    host = url.removeprefix("http://")
    verify_image(host, "vime", "sync-1", digest=DIGEST, revisions=(SHA,), arch="amd64", settings=settings)


CLIENTS: dict[str, tuple[Callable[[str, Path], None], type[VimesyncError]]] = {
    "github": (_github, GitHubError),
    "buildkite": (_buildkite, BuildkiteError),
    "registry": (_registry, RegistryError),
}

# What each client says when the layer stops an exchange (its own words, as before the layer).
SAYS = {
    (
        "github",
        "trickled headers",
    ): "/repos/o/r/pulls/7: no answer (status line and headers) within the deadline",
    ("buildkite", "trickled headers"): "no answer (status line and headers) within 1 s",
    ("registry", "trickled headers"): "no complete answer within the registry deadline",
    ("github", "trickled body"): "/repos/o/r/pulls/7: no complete answer within the deadline",
    ("buildkite", "trickled body"): "no complete answer within 1 s",
    ("registry", "trickled body"): "no complete answer within the registry deadline",
    ("github", "over the cap"): "an answer larger than 65,536 bytes",
    ("buildkite", "over the cap"): "an answer larger than 65,536 bytes",
    ("registry", "over the cap"): "an answer larger than 65,536 bytes",
    (
        "github",
        "redirect elsewhere",
    ): "a redirect to another host (not followed: the token stays with GitHub)",
    ("buildkite", "redirect elsewhere"): "a redirect (HTTP 302), not followed",
    ("registry", "redirect elsewhere"): "a redirect to another host, not followed",
    ("github", "redirect loop"): "more than 5 redirects",
    ("buildkite", "redirect loop"): "a redirect (HTTP 302), not followed",
    ("registry", "redirect loop"): "more than 3 redirects",
}


def _mode(mode: str, elsewhere: str) -> Callable[[str], list[Part]]:
    def answer(head: str) -> list[Part]:
        if head.startswith("HEAD ") and mode in ("trickled body", "over the cap"):
            return [
                reply(200, {"Docker-Content-Digest": DIGEST, "Content-Length": str(len(BIG))}, length=False)
            ]
        if mode == "trickled headers":
            return endless(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        if mode == "trickled body":
            return endless(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        if mode == "over the cap":
            return [reply(200, body=BIG, length=False)]
        if mode == "redirect elsewhere":
            return [reply(302, {"Location": f"{elsewhere}/steal"})]
        return [reply(302, {"Location": head.split(" ")[1]})]  # redirect loop

    return answer


@pytest.mark.parametrize(
    "mode", ["trickled headers", "trickled body", "over the cap", "redirect elsewhere", "redirect loop"]
)
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_is_bounded_by_the_one_layer(
    client: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vimesync import buildkite, registry
    from vimesync.github import pygithub

    for module, name in ((pygithub, "MAX_BYTES"), (buildkite, "MAX_BYTES"), (registry, "MAX_MANIFEST")):
        monkeypatch.setattr(module, name, CAP)
    call, error = CLIENTS[client]
    with raw_server(lambda _: [reply(200)]) as other, raw_server(_mode(mode, other.url)) as server:
        started = time.monotonic()
        with pytest.raises(error) as exc:
            call(server.url, tmp_path)
        took = time.monotonic() - started
    text = exc.value.message + " " + (exc.value.hint or "")
    assert SAYS[client, mode] in text and TOKEN not in text and exc.value.exit_code == 2
    assert took < 1.9 and other.requests == []
    assert all(TOKEN in r for r in server.requests)  # sent to the API root, and only there
