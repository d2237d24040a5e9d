"""``vimesync audit`` and ``vimesync audit review`` as use cases.

The audit classifies every path the sync changed between its baseline and its head against the
upstream tip; the policy and the path map are the head's (what the head says it carries), the
review ledger is the checkout's (each review is bound to a blob id).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vimesync.app import steps
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.audit.ledger import ledger_relpath, read_ledger, record, write_ledger
from vimesync.audit.model import AuditResult, Review
from vimesync.audit.run import reviews_for
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.outputs.model import Findings


@dataclass(frozen=True)
class AuditOutcome:
    audit: AuditResult
    audit_upstream_name: str = "upstream"  # the config's name of the upstream (CI annotations)
    audit_downstream_name: str = ""  # and of the downstream ([downstream] name)
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.AUDIT

    @property
    def ok(self) -> bool:
        return self.audit.ok

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    def to_json(self) -> dict[str, Any]:
        from vimesync.audit.document import audit_json

        return document(self.kind, self.exit_code, audit_json(self.audit))

    def findings(self) -> Findings:
        from vimesync.outputs.findings import audit_findings

        return audit_findings(
            self.audit, upstream_name=self.audit_upstream_name, downstream_name=self.audit_downstream_name
        )


def audit_sync(ws: Workspace, *, progress: Progress = no_progress) -> AuditOutcome:
    """Every path changed between the baseline and the head, classified and checked against the
    review ledger; ``progress``: told each of its two parts."""
    from vimesync.app.resolved import resolved_paths

    step = Phases(progress, "audit", 2)
    with step("walking the range and replaying the carry"):
        resolved_paths(ws)  # kept by the workspace: the audit takes it
    with step("classifying the changed paths"):
        result = steps.audit(ws)
    notes = (*ws.baseline_note, *filter(None, [ws.upstream_range.note]), *ws.notes)
    return AuditOutcome(
        audit=result,
        audit_upstream_name=ws.config.upstream_name,
        audit_downstream_name=ws.config.downstream_name,
        notes=notes,
    )


@dataclass(frozen=True)
class ReviewRequest:
    paths: tuple[str, ...]
    by: str
    all_unreviewed: bool = False  # every path the audit lists as unreviewed or stale (no paths given)


@dataclass(frozen=True)
class ReviewResult:
    sync: str
    ledger: str
    reviews: tuple[Review, ...]
    by: str = ""
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.REVIEW
    ok: bool = True
    exit_code: int = EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {"sync": self.sync, "ledger": self.ledger, "reviews": [r.__dict__ for r in self.reviews]}
        return document(self.kind, self.exit_code, body)


def review_paths(ws: Workspace, request: ReviewRequest, *, now: datetime | None = None) -> ReviewResult:
    """Record that ``by`` reviewed ``paths`` at their content in the head, in the sync's ledger.
    Without a baseline every file at the head would count as reviewed: only the sync's changes may."""
    notes = list(ws.baseline_note)
    if ws.flags.sync is None and (note := ws.upstream_range.note):
        notes.append(note)
    name = ws.sync_name
    at = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    down = ws.require_downstream()
    assert ws.head is not None
    targets = _targets(ws, request)
    if not targets:  # --all-unreviewed with nothing left: pasted twice, it records nothing
        notes.append("nothing to review: no path the audit lists is unreviewed or stale")
        return ReviewResult(
            sync=name, ledger=ledger_relpath(name), reviews=(), by=request.by, notes=tuple(notes)
        )
    from vimesync.app.resolved import resolved_paths

    also = resolved_paths(ws) if ws.upstream is not None else {}
    reviews = reviews_for(
        down, targets, by=request.by, at=at, head=ws.head, baseline=ws.require_baseline(), also=also
    )
    if request.all_unreviewed:  # exactly the listed paths (a target also names what is under it)
        reviews = [r for r in reviews if r.path in set(targets)]
    if ws.upstream is not None:
        # An overlay's review binds to its residue (it then carries over to later syncs).
        keys = {p.path: p.residue for p in steps.audit(ws).overlays if p.residue}
        reviews = [replace(r, residue=keys.get(r.path, "")) for r in reviews]
    ledger_file: Path = down / ledger_relpath(name)
    write_ledger(ledger_file, record(read_ledger(ledger_file, name), reviews))
    return ReviewResult(
        sync=name, ledger=ledger_relpath(name), reviews=tuple(reviews), by=request.by, notes=tuple(notes)
    )


def _targets(ws: Workspace, request: ReviewRequest) -> list[str]:
    """The paths given, or with ``--all-unreviewed`` every path the audit at the head lists as
    unreviewed or stale (what a stop of ``vimesync sync`` names: no path is pasted into a shell)."""
    from vimesync.errors import BadInput

    if request.all_unreviewed and request.paths:
        raise BadInput("--all-unreviewed takes no PATH", hint="give either PATH... or --all-unreviewed")
    if not request.all_unreviewed:
        if not request.paths:
            raise BadInput("no PATH to review", hint="give PATH... or --all-unreviewed")
        return list(request.paths)
    result = steps.audit(ws)
    return sorted(p.path for p in (*result.unreviewed, *result.stale))
