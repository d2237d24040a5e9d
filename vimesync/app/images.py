"""``vimesync sop record image`` as a use case: a container image built from the sync head, or
why an architecture has none (``--blocked``), recorded in sop/records/<sync>.toml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput
from vimesync.settings import RegistrySettings
from vimesync.sop.gatesfile import GatesConfig
from vimesync.sop.records import (
    ImageRecord,
    check_blocked,
    check_host,
    check_image,
    load_images,
    record_image,
    records_file,
)


@dataclass(frozen=True)
class RecordImageRequest:
    arch: str
    digest: str | None = None
    ref: str | None = None
    sha: str | None = None  # the commit the image was built from (default: the head)
    blocked: str | None = None  # why no image exists for ``arch`` (instead of a digest)
    host: str | None = None  # where it was built (sop/gates.toml [images] allowed_hosts)
    verify: bool = False  # check --ref's digest and revision label against its registry
    registry_insecure: bool = False  # plain http to a loopback registry


@dataclass(frozen=True)
class RecordImageResult:
    sync: str
    record: ImageRecord
    file: Path
    refused: str = ""  # a policy refusal (a failed check, exit 1): nothing was written
    verified: bool = False  # the registry confirmed the digest and the revision label
    kind: Kind = Kind.RECORD_IMAGE

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    def to_json(self) -> dict[str, Any]:
        r = self.record
        body: dict[str, Any] = {"sync": self.sync, "arch": r.arch, "digest": r.digest or None, "sha": r.sha}
        body.update({"blocked": r.blocked or None, "host": r.host or None, "recorded": self.ok})
        body.update({"refused": self.refused or None, "verified": self.verified, "file": str(self.file)})
        return document(self.kind, self.exit_code, body)


def _check_flags(request: RecordImageRequest) -> str:
    """The blocked reason ("" for an image); BadInput for flags that contradict each other."""
    if request.blocked is not None:
        if request.digest is not None:
            raise BadInput(
                "--blocked and --digest: give one (an image has a digest; a blocked arch has none)"
            )
        if request.ref is not None:
            raise BadInput("--ref: a blocked architecture has no image to name")
        if request.host is not None:
            raise BadInput("--host: a blocked architecture was built nowhere")
        if request.verify:
            raise BadInput("--verify: a blocked architecture has no image to verify")
        return check_blocked(request.blocked)
    if request.digest is None:
        raise BadInput(
            "--digest sha256:... is required (or --blocked REASON when no image can be built)",
        )
    if request.host is not None:
        check_host(request.host)
    if request.verify and request.ref is None:
        raise BadInput("--verify needs --ref REGISTRY/NAME:TAG: the registry and the tag to check")
    if request.registry_insecure and not request.verify:
        raise BadInput("--registry-insecure is for --verify: no registry is read without it")
    return ""


def registry_settings(ws: Workspace, insecure: bool) -> RegistrySettings:
    """The job's registry settings, plain http allowed (to loopback) by --registry-insecure."""
    from dataclasses import replace

    settings = ws.settings.registry
    return replace(settings, insecure=True) if insecure else settings


def verify_in_registry(
    ref: str,
    reference: str | None,
    digest: str,
    revisions: tuple[str, ...],
    arch: str,
    settings: RegistrySettings,
) -> tuple[str, str]:
    """(the problem, "" when none; the arch's manifest digest) of ``ref``'s image checked against
    its registry: the tag (or ``reference``) names ``digest`` and the image's revision label is
    one of ``revisions``. A registry that cannot say raises RegistryError (exit 2)."""
    from vimesync.registry import Mismatch, verify_image
    from vimesync.sop.imageref import parse_ref

    parsed = parse_ref(ref)
    try:
        found = verify_image(
            parsed.registry,
            parsed.repository,
            reference or parsed.tag or parsed.digest,
            digest=digest,
            revisions=revisions,
            arch=arch,
            settings=settings,
        )
    except Mismatch as exc:
        return str(exc), ""
    return "", found.manifest


def refuse_floating(ref: str | None, gates: GatesConfig) -> None:
    """A floating tag (``latest``, a name without a tag, ``[images] floating``) is moved only by
    ``sop promote``, which checks CI, images and evidence first: recording it here is refused."""
    if ref is None:
        return
    from vimesync.sop.imageref import parse_ref

    parsed = parse_ref(ref)
    if parsed.is_floating(gates.floating):
        raise BadInput(
            f"--ref {ref}: {parsed.tag!r} is a floating tag: record the immutable reference"
            " (name:sync-tag or @sha256:...) and move the floating one with sop promote",
            hint=f"vimesync sop promote --ref {ref}",
        )


def host_refusal(gates: GatesConfig, host: str | None) -> str:
    """Why ``sop/gates.toml [images] allowed_hosts`` refuses a build on ``host`` ("" when it
    allows it). Without a host the list cannot be checked: a missing flag, exit 2."""
    if gates.allowed_hosts is None:
        return ""
    if host is None:
        raise BadInput(
            "--host is required: sop/gates.toml [images] allowed_hosts lists the hosts a build may run on"
        )
    if gates.host_allowed(host):
        return ""
    allowed = ", ".join(gates.allowed_hosts[:5]) + (" …" if len(gates.allowed_hosts) > 5 else "")
    return (
        f"host {host} is not in sop/gates.toml [images] allowed_hosts ({allowed or 'none'}):"
        " an image built there is not recorded"
    )


def record_image_evidence(ws: Workspace, request: RecordImageRequest) -> RecordImageResult:
    """Record a container image built from the sync head (or why the architecture has none) in
    sop/records/<sync>.toml."""
    blocked = _check_flags(request)
    from vimesync.app.evidence import evidence_heads

    head, bound = evidence_heads(ws)
    name = ws.sync_name
    root = ws.sop_root
    built = request.sha if request.sha is not None else head
    digest = request.digest or ""
    gates = ws.gates
    refuse_floating(request.ref, gates)
    check_image(
        request.arch,
        digest,
        bound if built in (head, bound) else built,
        bound,
        request.ref,
        architectures=gates.architectures,
        existing=load_images(root, name),
        blocked=bool(blocked),
    )
    rec = ImageRecord(
        arch=request.arch,
        digest=digest,
        sha=bound,
        ref=request.ref or "",
        blocked=blocked,
        host=request.host or "",
    )
    refused = "" if blocked else host_refusal(gates, request.host)
    if not refused and request.verify and request.ref is not None:
        revisions = tuple(dict.fromkeys((bound, head)))
        registry = registry_settings(ws, request.registry_insecure)
        refused = verify_in_registry(request.ref, None, digest, revisions, request.arch, registry)[0]
    if refused:
        return RecordImageResult(sync=name, record=rec, file=records_file(root, name), refused=refused)
    if request.verify and request.ref is not None:  # read in the registry, not only typed
        from dataclasses import replace

        from vimesync.sop.imageref import parse_ref

        rec = replace(rec, verified=parse_ref(request.ref).registry)
    path = record_image(root, name, rec)
    return RecordImageResult(sync=name, record=rec, file=path, verified=request.verify)
