"""The ``--json`` document of ``audit`` (also the report's Final audit section)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from vimesync.audit.model import AuditResult, PathAudit


def audit_json(a: AuditResult) -> dict[str, Any]:
    return {
        "ok": a.ok,
        "baseline": a.baseline,
        "head": a.head,
        "upstream_tip": a.upstream_tip,
        "upstream_base": a.upstream_base,
        "sync": a.sync,
        "ledger": a.ledger_path,
        "path_map": [{"upstream": s, "downstream": d} for s, d in a.path_map],
        "changed": len(a.paths),
        "counts": a.counts(),
        "unreviewed": [p.path for p in a.unreviewed],
        "stale": [p.path for p in a.stale],
        "overlays": [p.path for p in a.overlays],
        "violations": [asdict(v) for v in a.violations],
        "paths": [_path(p) for p in a.paths],
    }


def _path(p: PathAudit) -> dict[str, Any]:
    """One path: ``class`` (one of CLASSES) first, then every field; ``cls`` is the same value,
    kept for readers of the documents before ``class`` (issue 20)."""
    return {"path": p.path, "class": p.cls, **asdict(p)}
