"""``vimesync sop status`` as a use case (``sop record image``: :mod:`vimesync.app.images`).

The status evaluates the gates of the sync at its head from the same facts the report uses:
the report's own use case, then the walk of the very range it walked, read at the head.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vimesync.app.context import SyncContext, SyncRequest, load, resolve
from vimesync.app.engines import EngineFlags, engine_inputs, single_check
from vimesync.app.report import CiFlags, at_head, ci_request, gate_notes, recorded_evidence
from vimesync.app.result import Kind, document
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.report.checklist import SopStatus, Uncarried, evaluate, status_to_dict
from vimesync.report.generate import ReportInputs, generate_report
from vimesync.report.model import Skipped, Summary, SyncReport
from vimesync.sop.gatesfile import gates_of, skip_flags, sop_root
from vimesync.sop.records import load_images


@dataclass(frozen=True)
class StatusRequest:
    sync: SyncRequest = field(default_factory=SyncRequest)
    source: Path | None = None
    ci_repo: str | None = None
    ci_pr: int | None = None
    require: tuple[str, ...] = ()
    skip_gate: tuple[str, ...] = ()


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


def _uncarried(ctx: SyncContext, report: SyncReport, config: Any) -> Uncarried | Skipped:
    """The applicable PRs of the range the report walked that the head does not carry: the
    Summary's when it looked at the head (no second walk), else a walk classified at the head
    (a pin bumped by the sync would make the default range empty)."""
    if ctx.upstream is None:
        return Skipped("No upstream repository was given ([upstream] path): not checked.")
    s = report.summary
    if isinstance(s, Summary) and s.head_known:
        left = tuple(p.number for p in s.not_carried if p.number is not None)
        return Uncarried(left, s.classified)
    from vimesync.upstream.pipeline import walk_and_classify

    walked = f"{s.base}..{s.tip}" if isinstance(s, Summary) else None
    walk = walk_and_classify(
        ctx.upstream, walked, policy=None, downstream=ctx.downstream, config=config, downstream_rev=ctx.head
    )
    return Uncarried.of_walk(walk)


def sop_status(request: StatusRequest) -> StatusResult:
    """Every gate of the sync at its head, in the SOP's order."""
    from vimesync.audit.model import AuditResult

    checkout = load(request.sync)
    ctx = resolve(request.sync, config=checkout)
    with at_head(ctx) as (cfg, head_notes, _):
        gates_cfg = gates_of(checkout)
        off = skip_flags(list(request.skip_gate) or None, gates_cfg)
        required = request.require or cfg.ci_required or gates_cfg.required
        flags = EngineFlags(source=request.source)
        many = len(cfg.engines) > 1
        inputs = ReportInputs(
            config=cfg,
            upstream=ctx.upstream,
            downstream=ctx.downstream,
            baseline=ctx.baseline,
            head=ctx.head or request.sync.head,
            sync=request.sync.sync,
            # Every engine the config names: one patches gate each (as the report checks them).
            check=None if many else single_check(cfg, flags),
            engines=engine_inputs(cfg, flags) if many else (),
            ci=ci_request(cfg, CiFlags(repo=request.ci_repo, pr=request.ci_pr), None, required),
        )
        report = replace(generate_report(inputs), gates_off=off, tests_required=gates_cfg.evidence)
        report = replace(report, evidence=recorded_evidence(ctx, checkout, report))
        uncarried = _uncarried(ctx, report, cfg)
    name = report.audit.sync if isinstance(report.audit, AuditResult) else ctx.sync_name()
    from vimesync.app.evidence import heads

    status = evaluate(
        report,
        sync=name,
        head=ctx.head or "",
        evidence_head=heads(ctx, checkout)[1],
        uncarried=uncarried,
        records=load_images(sop_root(checkout), name),
        architectures=gates_cfg.architectures,
        off=off,
    )
    return StatusResult(status=status, notes=gate_notes(gates_cfg) + head_notes)
