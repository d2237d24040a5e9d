"""``vimesync sop promote --ref NAME:TAG`` as a use case: record that a floating tag
(``vllm/vime:latest``) is to move to the images of the sync head, only when the release may move.
vimesync moves no tag itself: the promotion says the tag *moved* only with ``--verify`` once the
registry's tag is read naming the digest (``verified``); otherwise it is "to be moved".

Three gates must hold, each evaluated by the very code ``sop status`` and the report use: *ci*
(every required context green at the exact head: the report's CI evidence and gate), *tests*
(the evidence gate of sop/gates.toml ``[evidence] required``) and *images* (every architecture of
sop/gates.toml recorded at the evidence head, arm64 after amd64, or blocked with its reason).
Otherwise the promotion is refused (exit 1) with what is missing, and nothing is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vimesync.app.flags import CiFlags
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput
from vimesync.settings import RegistrySettings
from vimesync.sop.gates import Gate
from vimesync.sop.records import Promotion

PROMOTE_GATES = ("ci", "tests", "images")


@dataclass(frozen=True)
class PromoteRequest:
    ref: str
    digest: str | None = None  # what the tag moves to (default: the one image recorded)
    ci: CiFlags = field(default_factory=CiFlags)
    verify: bool = False  # check the target in the ref's registry before recording
    registry_insecure: bool = False


@dataclass(frozen=True)
class PromoteResult:
    sync: str
    ref: str
    head: str
    gates: tuple[Gate, ...]  # ci, tests, images as evaluated
    promotion: Promotion | None  # recorded (None: refused)
    file: Path
    notes: tuple[str, ...] = ()
    verified: bool = False
    kind: Kind = Kind.PROMOTE

    @property
    def ok(self) -> bool:
        return self.promotion is not None

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    @property
    def missing(self) -> tuple[str, ...]:
        """What keeps the tag where it is: one line per unmet gate."""
        return tuple(f"{g.name}: {g.detail}" for g in self.gates if not g.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.sop.promotions import promotion_to_dict

        body = {
            "sync": self.sync,
            "ref": self.ref,
            "head": self.head,
            "promoted": self.ok,
            "promotion": promotion_to_dict(self.promotion) if self.promotion else None,
            "missing": list(self.missing),
            "verified": self.verified,
            "gates": [
                {"name": g.name, "state": g.state, "detail": g.detail, "command": g.command}
                for g in self.gates
            ],
            "file": str(self.file),
            "notes": list(self.notes),
        }
        return document(self.kind, self.exit_code, body)


def _target_digest(request: PromoteRequest, images: dict[str, str]) -> str:
    """--digest, or the one image recorded (a multi-arch release names its index)."""
    from vimesync.sop.results import check_digest

    if request.digest is not None:
        return check_digest(request.digest, "--digest")
    distinct = sorted(set(images.values()))
    if len(distinct) > 1:
        raise BadInput(
            f"--digest is required: {len(images)} architectures have images"
            f" ({', '.join(images)}); give the digest of their multi-arch index"
        )
    return distinct[0] if distinct else ""


def promote(ws: Workspace, request: PromoteRequest) -> PromoteResult:
    """Evaluate the promotion gates at the sync head; record the promotion when all hold."""
    from dataclasses import replace

    from vimesync.app import steps
    from vimesync.app.evidence import evidence_heads, evidence_of
    from vimesync.report.checklist import images_gate
    from vimesync.report.model import Skipped, SyncReport
    from vimesync.sop.gates import off_gate
    from vimesync.sop.imageref import parse_ref
    from vimesync.sop.promotions import record_promotion
    from vimesync.sop.records import load_images, records_file
    from vimesync.sop.results import now

    parsed = parse_ref(request.ref)
    if parsed.digest or ":" not in request.ref.rpartition("/")[2]:
        raise BadInput(f"--ref {request.ref}: expected NAME:TAG (the tag to move), no @digest")
    head, bound = evidence_heads(ws)
    name = ws.sync_name
    root = ws.sop_root
    gates_cfg = ws.gates
    off = dict(ws.gates_off(()))  # [off] as sop status honours it (never in CI; --skip-gate is not promote's)
    ci_found = steps.ci_evidence(
        ws, steps.ci_target(ws, request.ci, None, ws.required_ci(request.ci.require))
    )
    # The report's own gates, on a report holding only what they read.
    report = SyncReport(
        upstream_name="",
        summary=Skipped(""),
        engines=(),
        audit=Skipped(""),
        validations=(),
        ci=ci_found,
        evidence=evidence_of(ws, name),
        tests_required=gates_cfg.evidence,
    )
    report = replace(report, gates_off=tuple((g, why) for g, why in off.items() if g in ("ci", "tests")))
    by_name = {g.name: g for g in report.gates}
    records = load_images(root, name)
    if "images" in off:
        images = off_gate("images", off["images"])
    else:
        images = images_gate(records, bound, gates_cfg.architectures, by_name["ci"])
    gates = (by_name["ci"], by_name["tests"], images)
    notes = ws.notes  # no gate is switched off here: --skip-gate is not promote's
    file = records_file(root, name)
    if "images" in off:
        gates = (
            *gates[:2],
            replace(images, state="failed", detail=f"switched off ({images.detail}): no image to promote"),
        )
    if not all(g.ok for g in gates):
        return PromoteResult(name, request.ref, head, gates, None, file, notes)
    arch_images = {
        a: r.digest for a, r in records.items() if a in gates_cfg.architectures and not r.is_blocked
    }
    promotion = Promotion(
        ref=request.ref,
        digest=_target_digest(request, arch_images),
        sha=bound,
        images=tuple((a, arch_images[a]) for a in gates_cfg.architectures if a in arch_images),
        promoted_at=now(),
    )
    if request.verify:
        from vimesync.app.images import registry_settings

        settings = registry_settings(ws, request.registry_insecure)
        problem = _verify(request, promotion, tuple(dict.fromkeys((bound, head))), settings)
        if problem:
            registry = replace(gates[2], name="registry", state="failed", detail=problem, command="")
            return PromoteResult(name, request.ref, head, (*gates, registry), None, file, notes)
        moved, note = _tag_moved(request.ref, promotion.digest, settings)
        promotion = replace(promotion, verified=parsed.registry if moved else "")
        notes = (*notes, note) if note else notes
    path = record_promotion(root, name, promotion)
    return PromoteResult(name, request.ref, head, gates, promotion, path, notes, verified=request.verify)


def _tag_moved(ref: str, digest: str, settings: RegistrySettings) -> tuple[bool, str]:
    """(whether the registry's ``ref`` names ``digest`` now, a note when it does not): vimesync
    moves no tag, so a move is said only once it is read."""
    from vimesync.registry import Mismatch, tag_digest
    from vimesync.sop.imageref import parse_ref

    parsed = parse_ref(ref)
    try:
        found = tag_digest(parsed.registry, parsed.repository, parsed.tag, settings=settings)
    except Mismatch:
        found = ""
    if found == digest:
        return True, ""
    now = f"names {found[:19]}…" if found else "is not in the registry"
    return False, (
        f"{ref} {now}, not yet {digest[:19]}…: recorded as to be moved; once the tag is moved,"
        f" vimesync sop promote --ref {ref} --verify records the move as verified"
    )


def _verify(
    request: PromoteRequest, promotion: Promotion, revisions: tuple[str, ...], registry: RegistrySettings
) -> str:
    """What the registry disagrees with ("" when nothing): the target exists in the ref's
    repository, each architecture's image in it is the one recorded and was built from the head."""
    from vimesync.app.images import verify_in_registry

    for arch, recorded in promotion.images:
        problem, manifest = verify_in_registry(
            request.ref, promotion.digest, promotion.digest, revisions, arch, registry
        )
        if problem:
            return problem
        if manifest != recorded:
            return f"the {arch} image of {promotion.digest[:19]}… is {manifest}, not the recorded {recorded}"
    return ""
