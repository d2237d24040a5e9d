"""Render a SyncReport as a JSON-ready dict holding the same facts as the markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from vimesync.audit.document import audit_json
from vimesync.audit.owncommits import OwnChanges
from vimesync.check.model import CheckReport, check_to_dict
from vimesync.ci.verdict import evidence_to_dict
from vimesync.report.links import Ref
from vimesync.report.model import EnginePatches, PrLine, Skipped, Summary, SyncReport
from vimesync.sop.results import Evidence

if TYPE_CHECKING:
    from vimesync.report.radar import RefState

SCHEMA = 1


def _ref(r: Ref) -> dict[str, Any]:
    return {"text": r.text, "url": r.url or None, "kind": r.kind or None}


def _pr(p: PrLine) -> dict[str, Any]:
    return {
        "number": int(p.ref.text.rsplit("#", 1)[1]),
        "ref": p.ref.text,
        "url": p.ref.url or None,
        "title": p.title,
        "reason": p.reason or None,
        "rule": p.rule,
        "partial_paths": list(p.partial_paths),
        "mirrored_by": p.mirrored_by,
        "reverted_by": p.reverted_by.text if p.reverted_by else None,
    }


def summary_json(s: Summary) -> dict[str, Any]:
    return {
        "upstream": s.upstream_name,
        "upstream_repo": s.upstream_repo,
        "base": s.base,
        "tip": s.tip,
        "applicable_count": len(s.applicable),
        "applicable": [_pr(p) for p in s.applicable],
        "excluded": [_pr(p) for p in s.excluded],
        "requested_inclusions": [_pr(p) for p in s.included],
        "mirrored": [_pr(p) for p in s.mirrored],
        "direct_commits": [{"sha": c.sha, "title": c.title, "url": c.url or None} for c in s.direct_commits],
        "notes": list(s.notes),
        "head_known": s.head_known,
        "not_carried": [_pr(p) for p in s.not_carried],
        # null: the carry was not replayed; else each carried item with resolved paths
        "resolved": s.resolutions.to_json() if s.resolutions is not None else None,
    }


def engine_json(e: EnginePatches) -> dict[str, Any]:
    return {
        "engine": e.engine,
        "pin": e.pin,
        "previous_pin": e.previous_pin,
        "pin_changed": None if e.previous_pin is None or e.pin is None else e.previous_pin != e.pin,
        "source": e.source,
        "sha256": e.sha256,
        "patches": [
            {
                "name": r.name,
                "has_dep3": r.has_header,
                "purpose": r.purpose,
                "description": r.description,
                "refs": [_ref(x) for x in r.refs],
                "status": r.status,
                "change": r.change,
                "header_uncommitted": r.header_uncommitted,
                "upstream": [_ref_state(s) for s in r.upstream],
            }
            for r in e.rows
        ],
        "removed": list(e.removed),
        "upstream_not_checked": e.upstream_not_checked,
    }


def _ref_state(s: RefState) -> dict[str, Any]:
    """One engine PR's (or commit's) state, as ``pin radar --json`` gives it."""
    return {
        "ref": s.ref.text,
        "state": s.state,
        "merge_commit": s.merge_commit,
        "in_pin": s.in_pin,
        "why": s.why or None,
    }


def validation_json(c: CheckReport) -> dict[str, Any]:
    return check_to_dict(c)


def _section(value: Any, fn: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    if isinstance(value, Skipped):
        return {"skipped": value.reason}
    return fn(value)


def evidence_json(e: Evidence) -> dict[str, Any]:
    """Every record: those at the evidence head (suites, runs, CI jobs, pre-commit, regression
    matrices), then the others (not evidence)."""
    from vimesync.sop.results import record_to_dict

    def one(r: Any) -> dict[str, Any]:
        return {**record_to_dict(r), "committed_by": e.committer(r)}

    return {
        "sync": e.sync,
        "head": e.head,
        "evidence_head": e.evidence_head,
        "recorded": [one(r) for r in (*e.tests, *e.runs, *e.ci, *e.precommit, *e.regress)],
        "not_evidence": [one(r) for r in e.not_evidence],
    }


def own_json(own: OwnChanges) -> dict[str, Any]:
    return {
        "commits": [asdict(c) for c in own.commits],
        "added": own.added,
        "removed": own.removed,
        "net": own.net,
        "carried": own.carried,
        "pin_bumps": own.pin_bumps,
        "bookkeeping": own.bookkeeping,
    }


def render_json(report: SyncReport) -> dict[str, Any]:
    """The report as data: ``{"schema", "title", "ok", "summary", "engine", "audit", "validation",
    "engines", "validations"}``; a skipped section is ``{"skipped": "<reason>"}``. ``engines`` and
    ``validations`` hold every engine's section (config order); ``engine`` and ``validation`` are
    the first engine's, as in a one-engine config."""
    return {
        "schema": SCHEMA,
        "title": report.title,
        "head": report.head,
        "ok": report.checks_ok,
        "summary": _section(report.summary, summary_json),
        "engine": _section(report.engine, engine_json),
        "audit": _section(report.audit, audit_json),
        "downstream_changes": _section(report.own, own_json),
        "validation": _section(report.validation, validation_json),
        "engines": [_section(e, engine_json) for e in report.engines],
        "validations": [_section(v, validation_json) for v in report.validations],
        "ci": _section(report.ci, evidence_to_dict),
        "images": None
        if report.images is None
        else {
            "sync": report.images.sync,
            "head": report.images.head,
            "architectures": list(report.images.architectures),
            "recorded": [asdict(r) for r in report.images.records],
            # Each floating tag: the digest it moves to at this head, None when it remains unchanged.
            "floating": [
                {"ref": ref, "moves_to": p.digest if p else None, "promotion": asdict(p) if p else None}
                for ref in report.images.floating
                for p in (report.images.promoted(ref),)
            ],
        },
        "evidence": None if report.evidence is None else evidence_json(report.evidence),
        "gates_ok": report.gates_ok,
        "gates": [
            {"name": g.name, "state": g.state, "detail": g.detail, "command": g.command} for g in report.gates
        ],
    }
