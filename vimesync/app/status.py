"""``vimesync sop status`` as a use case (``sop record image``: :mod:`vimesync.app.images`).

The status evaluates the gates of the sync at its head from the same facts the report uses:
the report's own use case, then the walk of the very range it walked, read at the head.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vimesync.app import steps, upstreamsteps
from vimesync.app.evidence import recorded_evidence
from vimesync.app.flags import CiFlags, EngineFlags
from vimesync.app.progress import Progress, no_progress
from vimesync.app.report import assemble
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.outputs.model import Findings
from vimesync.report.checklist import SopStatus, Uncarried, evaluate, status_to_dict
from vimesync.report.model import Skipped, Summary, SyncReport
from vimesync.sop.records import load_images


@dataclass(frozen=True)
class StatusRequest:
    engine: EngineFlags = field(default_factory=EngineFlags)  # --source
    ci: CiFlags = field(default_factory=CiFlags)
    publish: str | None = None  # the PR the sync publishes to: its head is the one CI must show


@dataclass(frozen=True)
class StatusResult:
    status: SopStatus
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.STATUS

    @property
    def ok(self) -> bool:
        return self.status.ok

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    def to_json(self) -> dict[str, Any]:
        return document(self.kind, self.exit_code, status_to_dict(self.status))

    def findings(self) -> Findings:
        from vimesync.outputs.findings import gate_findings

        return gate_findings(self.status.gates)


def _uncarried(ws: Workspace, report: SyncReport) -> Uncarried | Skipped:
    """The applicable PRs of the range the report walked that the head does not carry: the
    Summary's when it looked at the head (no second walk), else a walk classified at the head
    (a pin bumped by the sync would make the default range empty)."""
    if ws.upstream is None:
        return Skipped("No upstream repository was given ([upstream] path): not checked.")
    s = report.summary
    if isinstance(s, Summary) and s.head_known:
        left = tuple(p.number for p in s.not_carried if p.number is not None)
        return Uncarried(left, s.classified)
    return Uncarried.of_walk(upstreamsteps.walk(ws, at=ws.head))


def sop_status(ws: Workspace, request: StatusRequest, *, progress: Progress = no_progress) -> StatusResult:
    """Every gate of the sync at its head, in the SOP's order (``progress``: each step of it)."""
    from vimesync.app.evidence import evidence_heads
    from vimesync.audit.model import AuditResult

    off = ws.gates_off(request.ci.skip_gate)
    target = steps.ci_target(ws, request.ci, request.publish, ws.required_ci(request.ci.require))
    # Every engine the config names: one patches gate each (as the report checks them).
    report = assemble(ws, request.engine, target, progress, what="sop status")
    report = replace(report, gates_off=off, tests_required=ws.gates.evidence)
    report = replace(report, evidence=recorded_evidence(ws, report))
    uncarried = _uncarried(ws, report)
    name = report.audit.sync if isinstance(report.audit, AuditResult) else ws.sync_name
    status = evaluate(
        report,
        sync=name,
        head=ws.head or "",
        evidence_head=evidence_heads(ws)[1],
        uncarried=uncarried,
        records=load_images(ws.sop_root, name),
        architectures=ws.gates.architectures,
        off=off,
    )
    return StatusResult(status=status, notes=ws.gate_notes + ws.notes)
