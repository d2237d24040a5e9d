"""``vimesync audit`` and ``vimesync audit review`` as use cases.

The audit classifies every path the sync changed between its baseline and its head against the
upstream tip; the policy and the path map are the head's (what the head says it carries), the
review ledger is the checkout's (each review is bound to a blob id).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.app.context import SyncRequest, load, resolve
from vimesync.app.report import at_head, audit_in_checkout
from vimesync.app.result import Kind, document
from vimesync.audit.compare import default_sync_name, load_excluded_globs, reviews_for, run_audit
from vimesync.audit.ledger import ledger_relpath, read_ledger, record, write_ledger
from vimesync.audit.model import AuditResult, Review
from vimesync.audit.verify import load_verify
from vimesync.config import parse_map
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.pins import pin_relpath
from vimesync.upstream.translate import load_transform


@dataclass(frozen=True)
class AuditOutcome:
    audit: AuditResult
    audit_upstream_name: str = "upstream"  # the config's name of the upstream (CI annotations)
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


def audit_sync(request: SyncRequest) -> AuditOutcome:
    """Every path changed between the baseline and the head, classified and checked against the
    review ledger."""
    cfg = load(request)
    ctx = resolve(request, config=cfg, baseline_rule="required")
    upstream = ctx.require_upstream()
    tip, tip_note = ctx.upstream_tip()
    notes = ctx.notes + ((tip_note,) if tip_note else ())
    base = ctx.upstream_base(tip)
    with at_head(ctx) as (head_cfg, head_notes, tree):
        policy = request.policy or head_cfg.policy
        path_map = parse_map(request.path_map) if request.path_map else head_cfg.path_map
        result = run_audit(
            ctx.require_downstream(),
            ctx.require_baseline(),
            request.head,
            upstream,
            tip,
            sync=request.sync or default_sync_name(base, git.resolve(upstream, tip)),
            upstream_base=base,
            path_map=path_map,
            excluded_globs=load_excluded_globs(policy),
            transform=load_transform(head_cfg, path_map=path_map),
            verify=load_verify(head_cfg),
            upstream_pin=pin_relpath(head_cfg.upstream_pin.file, head_cfg.file, ctx.require_downstream()),
        )
        result = audit_in_checkout(result, tree, ctx.downstream)
    return AuditOutcome(audit=result, audit_upstream_name=head_cfg.upstream_name, notes=notes + head_notes)


@dataclass(frozen=True)
class ReviewRequest:
    paths: tuple[str, ...]
    by: str
    sync: SyncRequest = field(default_factory=SyncRequest)


@dataclass(frozen=True)
class ReviewResult:
    sync: str
    ledger: str
    reviews: tuple[Review, ...]
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.REVIEW
    ok: bool = True
    exit_code: int = EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {"sync": self.sync, "ledger": self.ledger, "reviews": [r.__dict__ for r in self.reviews]}
        return document(self.kind, self.exit_code, body)


def review_paths(request: ReviewRequest, *, now: datetime | None = None) -> ReviewResult:
    """Record that ``by`` reviewed ``paths`` at their content in the head, in the sync's ledger.
    Without a baseline every file at the head would count as reviewed: only the sync's changes may."""
    cfg = load(request.sync)
    ctx = resolve(request.sync, config=cfg, baseline_rule="required")
    notes = list(ctx.notes)
    if request.sync.sync is None:
        tip, tip_note = ctx.upstream_tip()
        notes += [tip_note] if tip_note else []
        name = ctx.sync_name(tip)
    else:
        name = request.sync.sync
    at = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    down = ctx.require_downstream()
    reviews = reviews_for(
        down,
        list(request.paths),
        by=request.by,
        at=at,
        head=request.sync.head,
        baseline=ctx.require_baseline(),
    )
    if ctx.upstream is not None:
        # An overlay's review binds to its residue (it then carries over to later syncs).
        audit = audit_sync(replace(request.sync, sync=name)).audit
        keys = {p.path: p.residue for p in audit.overlays if p.residue}
        reviews = [replace(r, residue=keys.get(r.path, "")) for r in reviews]
    ledger_file: Path = down / ledger_relpath(name)
    write_ledger(ledger_file, record(read_ledger(ledger_file, name), reviews))
    return ReviewResult(sync=name, ledger=ledger_relpath(name), reviews=tuple(reviews), notes=tuple(notes))
