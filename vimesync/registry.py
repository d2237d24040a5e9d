"""THE container-registry choke point: an image checked against the registry that holds it,
through the OCI distribution API (one channel of :mod:`vimesync.transport` per check, nothing cached):

- ``HEAD /v2/<name>/manifests/<tag>`` with ``Accept`` for OCI and Docker manifests and indexes:
  its ``Docker-Content-Digest`` must be the digest recorded;
- the manifest ``GET`` by that digest (its sha256 must be the digest: content-addressed), for an
  index the manifest of the architecture (linux), then the config blob (sha256 checked too): its
  ``config.Labels["org.opencontainers.image.revision"]`` must be the sync head;
- the registry is the reference's host, https; plain http only with ``insecure`` (the flag
  ``--registry-insecure`` or ``VIMESYNC_REGISTRY_INSECURE=1``) and only on loopback;
- a bearer token only from ``VIMESYNC_REGISTRY_TOKEN``, sent to the registry's host only (no token
  service is asked, no challenge followed elsewhere), never printed; what the environment says
  is passed in (:class:`vimesync.settings.RegistrySettings`);
- through the one bounded HTTP layer (:mod:`vimesync.transport`): every call within a 10 s
  connect and 30 s read timeout and one overall deadline for the whole check (60 s,
  ``VIMESYNC_REGISTRY_DEADLINE``), from each connection to each answer's last byte, so a server
  trickling its headers or body cannot hold it; a manifest is at most 4 MiB, a config 8 MiB, an
  index 256 entries; a redirect is followed only to the same scheme, host and port (3 at most);
- everything the registry says is a stranger's: shapes checked, digests and labels compared,
  never echoed (a mismatch names what we expected, and the registry's digest only when it is a
  well-formed one).

A mismatch (another digest, another revision, no such tag or architecture) is a
:class:`Mismatch`: the caller refuses the record (a failed check). A registry that cannot be read
is a :class:`~vimesync.errors.RegistryError` (exit 2)."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from vimesync.errors import RegistryError
from vimesync.settings import RegistrySettings
from vimesync.transport import (
    Answer,
    BadJson,
    Channel,
    Overdue,
    RedirectRefused,
    TransferLimits,
    TransportError,
    Unreachable,
    decode_json,
)

TOKEN_ENV = "VIMESYNC_REGISTRY_TOKEN"
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
MAX_MANIFEST = 4 * 1024 * 1024
MAX_CONFIG = 8 * 1024 * 1024
MAX_ENTRIES = 256
MAX_REDIRECTS = 3
MAX_OBJECTS = 10_000  # JSON objects in a manifest or config
REVISION_LABEL = "org.opencontainers.image.revision"

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
ACCEPT = ", ".join((OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST))
INDEXES = (OCI_INDEX, DOCKER_LIST)
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class Mismatch(Exception):
    """The registry holds something else than the record says (one line, our words only)."""


@dataclass(frozen=True)
class Verified:
    digest: str  # what the reference names (a manifest or an index)
    manifest: str  # the architecture's manifest (== digest for a single-platform image)
    revision: str  # the config's revision label: the head


def is_loopback(registry: str) -> bool:
    """``localhost[:port]``, ``127.x.y.z[:port]`` or ``[::1][:port]``."""
    try:
        name = urlsplit(f"//{registry}").hostname or ""
    except ValueError:
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def base_url(registry: str, *, insecure: bool) -> str:
    """``https://host[:port]``; ``http://`` only when ``insecure`` and the host is loopback."""
    if not insecure:
        return f"https://{registry}"
    if not is_loopback(registry):
        raise RegistryError(
            f"--registry-insecure: {registry} is not a loopback host;"
            " plain http is for 127.0.0.1/localhost only"
        )
    return f"http://{registry}"


class _Client:
    """One registry, one channel, one deadline."""

    def __init__(self, registry: str, repository: str, settings: RegistrySettings) -> None:
        self.root = base_url(registry, insecure=settings.insecure)
        self.repository = repository
        self.token_set = settings.token is not None
        self.deadline = time.monotonic() + settings.deadline
        limits = TransferLimits(
            max_bytes=MAX_CONFIG,
            max_redirects=MAX_REDIRECTS,
            connect_timeout=CONNECT_TIMEOUT,
            read_timeout=READ_TIMEOUT,
        )
        credentials = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
        self.channel = Channel(self.root, limits=limits, headers=credentials)

    def close(self) -> None:
        self.channel.close()

    def request(self, method: str, path: str, *, accept: str, limit: int) -> Answer:
        """The answer to ``method path``, redirects followed on the same origin only."""
        what = f"{method} {path.split('?')[0]}"
        try:
            return self.channel.exchange(
                method, path, deadline=self.deadline, headers={"Accept": accept}, max_bytes=limit
            )
        except RedirectRefused as exc:
            raise RegistryError(f"{what}: {exc}") from None
        except Overdue as exc:
            started = exc.phase != "start"
            raise RegistryError(
                f"{what}: no {'complete ' if started else ''}answer within the registry deadline"
            ) from None
        except Unreachable as exc:
            raise RegistryError(
                f"{what}: {exc.reason} "
                + ("while reading the answer" if exc.reading else "(the registry is unreachable)")
            ) from None
        except TransportError as exc:
            raise RegistryError(f"{what}: {exc}") from None

    def refused(self, status: int, what: str) -> RegistryError:
        if status in (401, 403):
            hint = f"{TOKEN_ENV} was refused" if self.token_set else f"set {TOKEN_ENV}"
            return RegistryError(f"{what}: HTTP {status}: the registry wants credentials", hint=hint)
        return RegistryError(f"{what}: HTTP {status}")

    def head_manifest(self, reference: str) -> str:
        """The digest the registry gives ``reference`` (a tag or a digest)."""
        path = f"/v2/{self.repository}/manifests/{reference}"
        answer = self.request("HEAD", path, accept=ACCEPT, limit=0)
        status, headers = answer.status, answer.headers
        if status == 404:
            raise Mismatch(f"{self.repository}:{reference} is not in the registry (HTTP 404)")
        if status != 200:
            raise self.refused(status, f"HEAD {path}")
        digest = headers.get("docker-content-digest", "")
        if not _DIGEST.fullmatch(digest):
            raise RegistryError(f"HEAD {path}: no sha256 Docker-Content-Digest in the answer")
        return digest

    def get_json(self, kind: str, digest: str, limit: int, accept: str) -> tuple[dict[str, Any], str]:
        """The manifest or blob ``digest``, its sha256 checked, as a JSON object (and its type)."""
        path = f"/v2/{self.repository}/{kind}/{digest}"
        answer = self.request("GET", path, accept=accept, limit=limit)
        status, headers, body = answer.status, answer.headers, answer.body
        if status == 404:
            raise Mismatch(f"{self.repository}@{digest} is not in the registry (HTTP 404)")
        if status != 200:
            raise self.refused(status, f"GET {path}")
        if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
            raise RegistryError(f"GET {path}: the answer's sha256 is not its digest")
        try:
            data = decode_json(body, max_objects=MAX_OBJECTS)
        except BadJson as exc:
            depth = exc.why == "depth"
            raise RegistryError(f"GET {path}: {exc}" + (" to be a manifest" if depth else "")) from None
        if not isinstance(data, dict):
            raise RegistryError(f"GET {path}: expected a JSON object")
        media = data.get("mediaType") or headers.get("content-type", "").split(";")[0].strip()
        return data, media if isinstance(media, str) else ""


def _platform_manifest(index: dict[str, Any], arch: str, where: str) -> str:
    entries = index.get("manifests")
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise RegistryError(f"{where}: an index needs a list of at most {MAX_ENTRIES} manifests")
    for entry in entries:
        if not isinstance(entry, dict):
            raise RegistryError(f"{where}: an index entry is not an object")
        platform = entry.get("platform")
        if not isinstance(platform, dict):
            continue
        if platform.get("architecture") == arch and platform.get("os", "linux") == "linux":
            digest = entry.get("digest")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise RegistryError(f"{where}: the {arch} entry has no sha256 digest")
            return digest
    raise Mismatch(f"{where}: the index has no linux/{arch} manifest")


def _revision(config: dict[str, Any], where: str) -> str:
    inner = config.get("config")
    labels = inner.get("Labels") if isinstance(inner, dict) else None
    if labels is None:
        raise Mismatch(f"{where}: the image config has no labels ({REVISION_LABEL} is needed)")
    if not isinstance(labels, dict):
        raise RegistryError(f"{where}: config.Labels is not an object")
    value = labels.get(REVISION_LABEL)
    if not isinstance(value, str):
        raise Mismatch(f"{where}: the image config has no {REVISION_LABEL} label")
    return value


def tag_digest(registry: str, repository: str, tag: str, *, settings: RegistrySettings) -> str:
    """The digest ``tag`` names in the registry now (``HEAD /v2/<name>/manifests/<tag>``):
    what a promotion checks before it says a floating tag moved. :class:`Mismatch` when the
    registry has no such tag, :class:`RegistryError` when it cannot say."""
    client = _Client(registry, repository, settings)
    try:
        return client.head_manifest(tag)
    finally:
        client.close()


def verify_image(
    registry: str,
    repository: str,
    reference: str,
    *,
    digest: str,
    revisions: tuple[str, ...],
    arch: str,
    settings: RegistrySettings,
) -> Verified:
    """Check that ``reference`` (a tag, or the digest itself) names ``digest`` in the registry and
    that the ``arch`` image it names was built from one of ``revisions`` (the head, and the
    evidence head it binds to). :class:`Mismatch` when it
    does not, :class:`RegistryError` when the registry cannot say. ``settings``: the token, plain
    http to loopback (``insecure``), the deadline."""
    client = _Client(registry, repository, settings)
    try:
        found = client.head_manifest(reference)
        if found != digest:
            raise Mismatch(f"{repository}:{reference} is {found} in the registry, not the recorded {digest}")
        manifest, media = client.get_json("manifests", digest, MAX_MANIFEST, ACCEPT)
        single = digest
        if media in INDEXES or "manifests" in manifest:
            single = _platform_manifest(manifest, arch, f"{repository}@{digest[:19]}…")
            manifest, media = client.get_json("manifests", single, MAX_MANIFEST, ACCEPT)
        config = manifest.get("config")
        config_digest = config.get("digest") if isinstance(config, dict) else None
        if not isinstance(config_digest, str) or not _DIGEST.fullmatch(config_digest):
            raise RegistryError(f"{repository}@{single[:19]}…: the manifest names no sha256 config blob")
        blob, _ = client.get_json("blobs", config_digest, MAX_CONFIG, "application/json, */*")
        found_revision = _revision(blob, f"{repository}@{single[:19]}…")
        if found_revision not in revisions:
            shown = found_revision if re.fullmatch(r"[0-9a-f]{7,64}", found_revision) else "something else"
            raise Mismatch(
                f"{repository}@{single[:19]}… was built from {shown} ({REVISION_LABEL}),"
                f" not the head {revisions[0][:12]}"
            )
        return Verified(digest=digest, manifest=single, revision=found_revision)
    finally:
        client.close()
