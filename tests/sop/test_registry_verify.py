"""``sop record image --verify`` and ``sop promote --verify`` against the REAL registry server
(Debian's docker-registry) on loopback, an image pushed with plain HTTP requests; and what a
hostile registry answer may not make us do (a loopback server answering out of bounds)."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.registry import DOCKER_MANIFEST, Registry, running_registry
from vimesync.demo.build import Demo, build_demo


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with running_registry(tmp_path_factory.mktemp("registry")) as r:
        yield r


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    monkeypatch.chdir(built.downstream)
    for name in ("CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED", "GH_TOKEN", "VIMESYNC_REGISTRY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    yield built
    shutil.rmtree(built.downstream / "sop/records", ignore_errors=True)


def _record(capsys, ref: str, digest: str, *extra: str) -> tuple[int, str, str]:
    args = ["sop", "record", "image", "--arch", "amd64", "--digest", digest, "--ref", ref, "--verify"]
    return run(capsys, *args, "--registry-insecure", *extra)


def test_the_right_digest_and_revision_pass(demo: Demo, registry: Registry, capsys) -> None:
    digest = registry.push_image("vime", "sync-ok", revision=demo.head)
    code, out, _ = _record(capsys, f"{registry.host}/vime:sync-ok", digest, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["verified"] is True and doc["recorded"] is True, doc
    (file,) = (demo.downstream / "sop/records").iterdir()
    assert f'verified = "{registry.host}"' in file.read_text()
    md = run(capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests")[1]
    line = f"- amd64: `{registry.host}/vime:sync-ok@{digest}` (verified in `{registry.host}`)"
    assert line in md, md
    # Recorded again without --verify: typed only, and said so (the claim is not kept).
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", digest)[0] == 0
    assert "verified" not in file.read_text()
    md = run(capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests")[1]
    assert f"- amd64: `{digest}` (recorded, not verified)" in md


def test_a_wrong_digest_is_refused_and_nothing_is_written(demo: Demo, registry: Registry, capsys) -> None:
    digest = registry.push_image("vime", "sync-digest", revision=demo.head)
    wrong = "sha256:" + "0" * 64
    code, out, err = _record(capsys, f"{registry.host}/vime:sync-digest", wrong)
    assert code == 1 and out == ""
    assert err.splitlines()[0] == (
        f"error: refused: vime:sync-digest is {digest} in the registry, not the recorded {wrong}"
    )
    assert not (demo.downstream / "sop/records").exists()


def test_a_wrong_revision_label_is_refused(demo: Demo, registry: Registry, capsys) -> None:
    digest = registry.push_image("vime", "sync-rev", revision=demo.baseline)
    code, _, err = _record(capsys, f"{registry.host}/vime:sync-rev", digest)
    assert code == 1 and f"was built from {demo.baseline} (org.opencontainers.image.revision)" in err
    assert f"not the head {demo.head[:12]}" in err and len(err.strip().splitlines()) == 1
    digest = registry.push_image("vime", "sync-nolabel", revision=None)
    code, _, err = _record(capsys, f"{registry.host}/vime:sync-nolabel", digest)
    assert code == 1 and "the image config has no org.opencontainers.image.revision label" in err


def test_a_missing_tag_is_refused(demo: Demo, registry: Registry, capsys) -> None:
    code, _, err = _record(capsys, f"{registry.host}/vime:no-such-tag", "sha256:" + "1" * 64)
    assert code == 1 and "vime:no-such-tag is not in the registry (HTTP 404)" in err


def test_an_oversized_manifest_is_an_error(
    demo: Demo, registry: Registry, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import requests

    from vimesync import registry as client

    digest = registry.push_image("vime", "sync-small", revision=demo.head)
    manifest = requests.get(
        f"{registry.url}/v2/vime/manifests/{digest}", headers={"Accept": DOCKER_MANIFEST}, timeout=10
    ).json()
    manifest["annotations"] = {"padding": "x" * 200_000}
    big = registry.manifest("vime", "sync-big", json.dumps(manifest).encode(), DOCKER_MANIFEST)
    # The real server takes manifests up to 4 MiB, our cap: a lower cap shows it on a real answer.
    monkeypatch.setattr(client, "MAX_MANIFEST", 64 * 1024)
    code, _, err = _record(capsys, f"{registry.host}/vime:sync-big", big)
    assert code == 2 and "an answer larger than" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_multi_arch_index_is_promoted_after_verification(
    demo: Demo, registry: Registry, capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    amd = registry.push_image("vime", "sync-amd64", revision=demo.head, arch="amd64")
    arm = registry.push_image("vime", "sync-arm64", revision=demo.head, arch="arm64")
    index = registry.push_index("vime", "sync-index", {"amd64": amd, "arm64": arm})
    stale = registry.push_index("vime", "stale-index", {"amd64": amd})
    for arch, digest in (("amd64", amd), ("arm64", arm)):
        args = ["--arch", arch, "--digest", digest, "--ref", f"{registry.host}/vime:sync-{arch}"]
        assert run(capsys, "sop", "record", "image", *args, "--verify", "--registry-insecure")[0] == 0
    fake = FakeGitHub(range(1, 2))
    fake.statuses[demo.head] = [
        {"context": "buildkite/vime", "state": "success", "description": "", "target_url": ""}
    ]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        base = ["sop", "promote", "--ref", f"{registry.host}/vime:latest", "--ci-repo", "o/r", "--json"]
        gates = demo.downstream / "sop/gates.toml"
        before = gates.read_bytes()
        gates.unlink()
        gates.write_bytes(before.replace(b"[off]\n", b'[off]\ntests = "no suites in this test"\n', 1))
        try:
            # An index without the arm64 image that was recorded: refused, naming the architecture.
            code, out, _ = run(capsys, *base, "--digest", stale, "--verify", "--registry-insecure")
            doc = json.loads(out)
            assert code == 1 and doc["missing"] == [
                f"registry: vime@{stale[:19]}…: the index has no linux/arm64 manifest"
            ]
            code, out, _ = run(capsys, *base, "--digest", index, "--verify", "--registry-insecure")
            doc = json.loads(out)
            assert (
                code == 0 and doc["verified"] and doc["promotion"]["images"] == {"amd64": amd, "arm64": arm}
            )
            # The target is verified, but the tag was read and names nothing yet: "to be moved".
            latest = f"{registry.host}/vime:latest"
            assert doc["promotion"]["verified"] is None
            assert doc["notes"][-1].startswith(f"{latest} is not in the registry, not yet {index[:19]}…")
            md = run(capsys, "report", "--baseline", demo.baseline, "--ci-repo", "o/r")[1]
            assert f"`{latest}` to be moved to `{index}` (recorded, not verified)." in md
            registry.push_index("vime", "latest", {"amd64": amd})  # the tag names another index
            code, out, _ = run(capsys, *base, "--digest", index, "--verify", "--registry-insecure")
            doc = json.loads(out)
            assert code == 0 and doc["promotion"]["verified"] is None and " names sha256:" in doc["notes"][-1]
            registry.push_index("vime", "latest", {"amd64": amd, "arm64": arm})  # moved: read, then said
            code, out, _ = run(capsys, *base, "--digest", index, "--verify", "--registry-insecure")
            doc = json.loads(out)
            assert code == 0 and doc["promotion"]["verified"] == registry.host, doc
            md = run(capsys, "report", "--baseline", demo.baseline, "--ci-repo", "o/r")[1]
            assert f"`{latest}` moved to `{index}` (verified in `{registry.host}`)." in md
            code, out, _ = run(capsys, *base[:-1], "--digest", index, "--verify", "--registry-insecure")
            assert f"{latest} moved to {index} at {demo.head[:8]} (verified in {registry.host})" in " ".join(
                out.split()
            )
        finally:
            gates.unlink()
            gates.write_bytes(before)


def test_plain_http_is_for_loopback_only(demo: Demo, capsys) -> None:
    code, _, err = _record(capsys, "registry.example.com/vime:sync-1", "sha256:" + "1" * 64)
    assert code == 2 and "is not a loopback host" in err
    code, _, err = run(
        capsys, "sop", "record", "image", "--arch", "amd64", "--digest", "sha256:" + "1" * 64, "--verify"
    )
    assert code == 2 and "--verify needs --ref" in err


# --- a hostile registry: a loopback server answering out of bounds -------------------------------


BOMB = b"[" * 100_000 + b"]" * 100_000
BOMB_DIGEST = "sha256:" + hashlib.sha256(BOMB).hexdigest()
ENTRY = {"mediaType": DOCKER_MANIFEST, "digest": "sha256:" + "2" * 64, "platform": {"architecture": "s390x"}}
BIG_INDEX = json.dumps({"mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [ENTRY] * 300})
BIG_INDEX_DIGEST = "sha256:" + hashlib.sha256(BIG_INDEX.encode()).hexdigest()


class _Hostile(BaseHTTPRequestHandler):
    mode = ""
    token_asked: list[str] = []

    def do_HEAD(self) -> None:  # noqa: N802
        self._answered()

    def do_GET(self) -> None:  # noqa: N802
        self._answered()

    def _answered(self) -> None:
        try:
            self._answer()
        except OSError:
            pass  # the client gave up (at its deadline, its socket shut down), as it should

    def _answer(self) -> None:
        mode = type(self).mode
        if mode == "header-trickle":  # a byte of the status line at a time: no read times out
            self._trickle_status_line()
        elif mode in ("bomb", "big-index"):  # hashing to its digest, but too deep / too many entries
            body, digest = (BOMB, BOMB_DIGEST) if mode == "bomb" else (BIG_INDEX.encode(), BIG_INDEX_DIGEST)
            self._whole(body, digest)
        elif mode == "challenge":  # a token service elsewhere: never asked, the token never sent there
            self._challenge()
        elif mode == "redirect-loop":
            self._redirect(302, self.path)
        elif mode == "redirect":
            self._redirect(307, "http://localhost:1/v2/elsewhere")
        else:
            self._manifest(mode)

    def _trickle_status_line(self) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nDocker-Content-Digest: sha256:":
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.05)

    def _whole(self, body: bytes, digest: str) -> None:
        self.send_response(200)
        self.send_header("Docker-Content-Digest", digest)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    def _challenge(self) -> None:
        if self.path.startswith("/token"):
            type(self).token_asked.append(self.headers.get("Authorization", ""))
        self.send_response(401)
        port = self.server.server_address[1]
        self.send_header("WWW-Authenticate", f'Bearer realm="http://127.0.0.1:{port}/token",service="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _redirect(self, status: int, location: str) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.end_headers()

    def _manifest(self, mode: str) -> None:
        """A small manifest (with a hostile key), its digest and its pace as ``mode`` says."""
        self.send_response(200)
        if mode == "bad-digest":
            self.send_header("Docker-Content-Digest", "sha256:\x1b[2Jnope")
        elif mode == "wrong-body":
            self.send_header("Docker-Content-Digest", "sha256:" + "1" * 64)
        elif mode in ("trickle", "length-trickle"):
            self.send_header("Docker-Content-Digest", "sha256:" + "1" * 64)
        if mode == "length-trickle" and self.command == "GET":  # a length, then a byte at a time
            self.send_header("Content-Length", "100000")
        self.send_header("Content-Type", DOCKER_MANIFEST)
        self.end_headers()
        if self.command == "GET":
            if mode in ("trickle", "length-trickle"):
                for _ in range(40):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            self.wfile.write(b'{"schemaVersion": 2, "\x1b[2J": 1}')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[tuple[str, type[_Hostile]]]:
    handler = type("H", (_Hostile,), {"mode": "", "token_asked": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "mode, needle",
    [
        ("redirect", "a redirect to another host, not followed"),
        ("bad-digest", "no sha256 Docker-Content-Digest in the answer"),
        ("wrong-body", "the answer's sha256 is not its digest"),
        ("trickle", "no complete answer within the registry deadline"),
        ("length-trickle", "no complete answer within the registry deadline"),
        ("header-trickle", "no complete answer within the registry deadline"),
        ("bomb", "nested too deeply to be a manifest"),
        ("big-index", "an index needs a list of at most 256 manifests"),
        ("challenge", "HTTP 401: the registry wants credentials"),
        ("redirect-loop", "more than 3 redirects"),
    ],
)
def test_a_hostile_registry_answer_is_a_one_line_error(
    demo: Demo,
    capsys,
    monkeypatch: pytest.MonkeyPatch,
    hostile: tuple[str, type[_Hostile]],
    mode: str,
    needle: str,
) -> None:
    host, handler = hostile
    handler.mode = mode
    monkeypatch.setenv("VIMESYNC_REGISTRY_DEADLINE", "1")
    digest = {"bomb": BOMB_DIGEST, "big-index": BIG_INDEX_DIGEST}.get(mode, "sha256:" + "1" * 64)
    monkeypatch.setenv("VIMESYNC_REGISTRY_TOKEN", "reg-secret-token")
    started = time.monotonic()
    code, _, err = _record(capsys, f"{host}/vime:sync-1", digest)
    assert time.monotonic() - started < 1.9  # the 1 s deadline held, however the server trickles
    assert code == 2 and needle in err, err
    assert "\x1b" not in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert "reg-secret-token" not in err and handler.token_asked == []
    assert not (demo.downstream / "sop/records").exists()


def test_the_registry_token_goes_to_the_registry_only_and_is_never_shown(
    demo: Demo, capsys, monkeypatch: pytest.MonkeyPatch, hostile: tuple[str, type[_Hostile]]
) -> None:
    host, handler = hostile
    handler.mode = "redirect"
    monkeypatch.setenv("VIMESYNC_REGISTRY_TOKEN", "reg-secret-token")
    code, out, err = _record(capsys, f"{host}/vime:sync-1", "sha256:" + "1" * 64)
    assert code == 2 and "reg-secret-token" not in out + err
