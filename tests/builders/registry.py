"""The real registry (Debian's ``docker-registry``, the CNCF distribution server) on loopback,
and an image pushed to it with plain HTTP requests: no docker daemon (tests only).

Absent locally, tests that need it skip saying why; under ``CI=true`` they fail instead (``.ci/run``
installs the package), so a CI run cannot pass by skipping them."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

BINARY = "docker-registry"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


def registry_binary() -> str:
    """The server's path, or a skip (a failure under CI=true) naming the package."""
    found = shutil.which(BINARY) or (
        "/usr/bin/docker-registry" if os.path.exists("/usr/bin/docker-registry") else None
    )
    if found is None:
        why = "the real registry server is not installed (apt-get install docker-registry)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{why}: CI must run these tests (.ci/run installs it)")
        pytest.skip(why)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Registry:
    host: str  # 127.0.0.1:PORT, as an image reference names it
    url: str

    def blob(self, repo: str, data: bytes) -> str:
        """Upload ``data`` (POST then a monolithic PUT); its digest."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        start = requests.post(f"{self.url}/v2/{repo}/blobs/uploads/", timeout=10)
        assert start.status_code == 202, start.text
        location = start.headers["Location"]
        location = location if location.startswith("http") else self.url + location
        sep = "&" if "?" in location else "?"
        put = requests.put(
            f"{location}{sep}digest={digest}",
            data=data,
            headers={"Content-Type": "application/octet-stream"},
            timeout=10,
        )
        assert put.status_code == 201, put.text
        return digest

    def manifest(self, repo: str, reference: str, body: bytes, media_type: str) -> str:
        put = requests.put(
            f"{self.url}/v2/{repo}/manifests/{reference}",
            data=body,
            headers={"Content-Type": media_type},
            timeout=10,
        )
        assert put.status_code == 201, put.text
        return put.headers["Docker-Content-Digest"]

    def push_image(self, repo: str, tag: str, *, revision: str | None, arch: str = "amd64") -> str:
        """A one-layer image whose config carries ``revision`` as its OCI revision label; the
        manifest's digest."""
        labels = {"org.opencontainers.image.revision": revision} if revision is not None else {}
        config = json.dumps(
            {
                "architecture": arch,
                "os": "linux",
                "config": {"Labels": labels},
                "rootfs": {"type": "layers", "diff_ids": []},
            }
        ).encode()
        layer = f"layer of {repo}:{tag} {arch}".encode()
        config_digest = self.blob(repo, config)
        layer_digest = self.blob(repo, layer)
        manifest = {
            "schemaVersion": 2,
            "mediaType": DOCKER_MANIFEST,
            "config": {
                "mediaType": "application/vnd.docker.container.image.v1+json",
                "size": len(config),
                "digest": config_digest,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "size": len(layer),
                    "digest": layer_digest,
                }
            ],
        }
        return self.manifest(repo, tag, json.dumps(manifest).encode(), DOCKER_MANIFEST)

    def push_index(self, repo: str, tag: str, manifests: dict[str, str]) -> str:
        """An OCI index of ``{arch: manifest digest}`` under ``tag``."""
        entries = []
        for arch, digest in manifests.items():
            size = len(
                requests.get(
                    f"{self.url}/v2/{repo}/manifests/{digest}",
                    headers={"Accept": DOCKER_MANIFEST},
                    timeout=10,
                ).content
            )
            entries.append(
                {
                    "mediaType": DOCKER_MANIFEST,
                    "digest": digest,
                    "size": size,
                    "platform": {"architecture": arch, "os": "linux"},
                }
            )
        body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}).encode()
        return self.manifest(repo, tag, body, OCI_INDEX)


CONFIG = """\
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: {addr}
"""


@contextmanager
def running_registry(tmp: Path) -> Iterator[Registry]:
    """The real server on a free loopback port, storage and config in ``tmp``; killed after."""
    binary = registry_binary()
    port = _free_port()
    addr = f"127.0.0.1:{port}"
    (tmp / "storage").mkdir(parents=True, exist_ok=True)
    config = tmp / "config.yml"
    config.write_text(CONFIG.format(root=tmp / "storage", addr=addr))
    log = (tmp / "registry.log").open("wb")
    proc = subprocess.Popen(
        [binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    url = f"http://{addr}"
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise AssertionError(
                    f"docker-registry exited {proc.returncode}: {(tmp / 'registry.log').read_text()[:2000]}"
                )
            try:
                if requests.get(f"{url}/v2/", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("docker-registry did not answer /v2/ within 20 s")
            time.sleep(0.05)
        yield Registry(host=addr, url=url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
