"""``vimesync report`` as a use case: the sync PR description of one head, every figure computed,
assembled from the steps (:mod:`vimesync.app.steps`) that ``sop status`` and ``sync`` use too.

The head is a commit: its series, patches, pins, policy and gates are read from it (the workspace
reads the head), whatever the working tree holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vimesync.app import steps, upstreamsteps
from vimesync.app.flags import CiFlags, EngineFlags
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.outputs.model import Findings
from vimesync.report.build import ReportParts, build_report
from vimesync.report.model import SyncReport
from vimesync.settings import GitHubSettings


@dataclass(frozen=True)
class ReportRequest:
    engine: EngineFlags = field(default_factory=EngineFlags)
    ci: CiFlags = field(default_factory=CiFlags)
    publish: str | None = None  # owner/repo#N: whose head the report must be (CI) and where it goes


@dataclass(frozen=True)
class ReportResult:
    report: SyncReport
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.REPORT

    @property
    def ok(self) -> bool:
        return self.report.gates_ok

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    def to_json(self) -> dict[str, Any]:
        from vimesync.report.document import render_json

        return document(self.kind, self.exit_code, render_json(self.report))

    def findings(self) -> Findings:
        """Every gate, and the report itself as the job summary."""
        from vimesync.outputs.findings import gate_findings
        from vimesync.report.markdown import render_markdown

        return gate_findings(self.report.gates, summary=render_markdown(self.report))


def _refuse_nothing(ws: Workspace, engine: EngineFlags) -> None:
    """A report of nothing at all (no config, no repository, no engine given) is bad input, exit 2
    as every other command says it, not a report whose every gate reads "not checked"."""
    from vimesync.config import missing_input

    pin = ws.config.engine
    given = (ws.upstream, ws.downstream, engine.source, engine.series, pin.source, pin.package)
    if ws.config.file is None and all(v is None for v in given):
        raise missing_input(ws.config, "nothing to report on", flag="--upstream PATH", key="[upstream] path")


def assemble(
    ws: Workspace,
    engine: EngineFlags,
    ci: steps.CiTarget | None,
    progress: Progress = no_progress,
    *,
    what: str = "report",
) -> SyncReport:
    """Walk, check and audit what the workspace allows, then build the report: a section whose
    inputs are missing becomes a one-line Skipped instead of an error. ``progress`` is told each
    of its five steps (``what 2/5: ...``). Once per workspace, engine flags and CI target: the
    status step of a sync builds it, its report step takes it."""
    return ws.once(("report", engine, ci), lambda: _assemble(ws, engine, ci, progress, what))


def _assemble(
    ws: Workspace, engine: EngineFlags, ci: steps.CiTarget | None, progress: Progress, what: str
) -> SyncReport:
    from vimesync.app.resolved import resolutions

    step = Phases(progress, what, 5)
    with step("walking the upstream range"):
        walked = upstreamsteps.walked(ws) if ws.upstream is not None else None
    at_head = walked is not None and ws.downstream is not None and ws.baseline is not None
    given = (("--downstream", ws.downstream), ("--baseline", ws.baseline), ("--upstream", ws.upstream))
    missing = [flag for flag, value in given if value is None]
    with step("auditing the changed paths"):
        audit = None if missing else steps.audit(ws)
    with step("reading what the head carries"):
        # What the head carries, not what the walk found: mirrored at the head, not the baseline.
        carried = upstreamsteps.carried_at_head(ws, walked) if at_head and walked is not None else None
        # The conflicts the carry resolved, replayed (what the resolution dropped of upstream).
        resolved = resolutions(ws) if at_head else None
        skipped_prs = upstreamsteps.skipped_at_conflict(ws) if at_head else frozenset()
    with step("checking the patch stack") as update:
        engines = steps.engine_sections(ws, engine, update)
    with step("reading CI and the downstream's own commits"):
        ci_evidence, own = steps.ci_evidence(ws, ci), steps.own_changes(ws)
    parts = ReportParts(
        walk=walked,
        audit=audit,
        upstream_name=upstreamsteps.upstream_name(ws),
        downstream_name=ws.config.downstream_name,
        upstream_repo=upstreamsteps.upstream_repo(ws),
        skipped={
            "summary": "No upstream repository was given (--upstream): no summary.",
            "audit": f"No {', '.join(missing)} given: no audit of the changed paths.",
        },
        carried=carried,
        resolutions=resolved,
        skipped_prs=skipped_prs,
        engines=engines,
        ci=ci_evidence,
        own=own,
        head=ws.head,
    )
    return build_report(parts)


def make_report(ws: Workspace, request: ReportRequest, *, progress: Progress = no_progress) -> ReportResult:
    """Walk, check and audit the sync at its head and build the report (nothing published)."""
    from vimesync.app.evidence import images_of, recorded_evidence

    _refuse_nothing(ws, request.engine)
    target = steps.ci_target(ws, request.ci, request.publish, ws.required_ci(request.ci.require))
    report = assemble(ws, request.engine, target, progress)
    report = replace(
        report,
        gates_off=ws.gates_off(request.ci.skip_gate),
        images=images_of(ws, report),
        evidence=recorded_evidence(ws, report),
        tests_required=ws.gates.evidence,
    )
    return ReportResult(report=report, notes=ws.gate_notes + ws.notes)


def refuse_early(publish: str | None, out_file: Path | None, github: GitHubSettings) -> None:
    """Before any work: a bad --publish target, no token for it, or an --output that cannot be
    written (a symlink there, or on a folder inside the checkout) is refused."""
    from vimesync.safefs import check_output_path

    if publish is not None:
        from vimesync.report.publish import parse_target, require_token

        parse_target(publish)
        require_token(github)
    if out_file is not None:
        check_output_path(out_file, what="--output")


def publish_report(target: str, result: ReportResult, github: GitHubSettings) -> Any:
    """Put the report into the PR description of ``target`` (between its markers)."""
    from vimesync.report.markdown import render_markdown
    from vimesync.report.publish import publish

    return publish(target, render_markdown(result.report), github, title=result.report.title)


def write_output(path: Path, text: str) -> None:
    """The report (Markdown or JSON) written to ``--output``, atomically, never through a symlink."""
    from vimesync.safefs import write_atomic

    write_atomic(path, text.encode("utf-8"), what="--output")
