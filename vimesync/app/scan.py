"""``pin scan``: the patch stack at several releases, as a patch x release matrix; with
``merge``, per-release documents (one CI job each) merged into one matrix."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.check.scan import ScanReport, ScanTarget
from vimesync.errors import BadInput

MAX_MERGE_BYTES = 16 << 20  # one per-release document: a few KiB per patch


@dataclass(frozen=True)
class ScanRequest:
    """What the flags say (None: not given); ``to`` or ``merge``, not both."""

    to: tuple[str, ...] = ()
    merge: tuple[Path, ...] = ()
    svg: Path | None = None


@dataclass(frozen=True)
class ScanOutcome:
    report: ScanReport
    svg: Path | None = None  # the picture written
    kind: Kind = Kind.SCAN

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.check.scan import scan_to_dict

        body = scan_to_dict(self.report)
        body["svg"] = str(self.svg) if self.svg is not None else None
        return document(self.kind, self.exit_code, body)


def scan(
    ws: Workspace, engine: EngineFlags, request: ScanRequest, *, progress: Progress = no_progress
) -> ScanOutcome:
    """Run the stack at every ``--to`` in one walk (or merge ``--merge`` documents); write ``--svg``."""
    r = request
    if r.to and r.merge:
        raise BadInput("pin scan takes --to REV... or --merge FILE..., not both")
    if r.svg is not None:
        from vimesync.safefs import check_output_path

        check_output_path(r.svg, what="--svg")  # refused before any work
    if r.merge:
        given = [engine.engine, engine.source, engine.rev, engine.series, engine.strip, engine.python]
        if any(v is not None for v in given):
            raise BadInput(
                "pin scan --merge reads documents only: --engine/--source/--rev/--series/... do not apply"
            )
        report = _merged(r.merge)
    else:
        report = _scanned(ws, engine, r, progress)
    if r.svg is not None:
        from vimesync.report.matrix import scan_svg
        from vimesync.safefs import write_atomic

        write_atomic(r.svg, scan_svg(report).encode(), what="--svg")
    return ScanOutcome(report, r.svg)


def _scanned(ws: Workspace, engine: EngineFlags, r: ScanRequest, progress: Progress) -> ScanReport:
    from vimesync.app.bump import resolve_target
    from vimesync.check.run import pinned_source
    from vimesync.check.scan import mark_pinned, run_scan

    if not r.to:
        raise BadInput("pin scan needs --to REV|SOURCE (once per release), or --merge FILE...")
    opts = ws.engine_plan_one(engine)
    current, _ = pinned_source(opts)  # a pypi: pin fetched: a bare rev then has no repository
    opts = replace(opts, source=current, package=None)
    targets = []
    for to in r.to:
        t = resolve_target(to, opts)
        targets.append(ScanTarget(to, t.source, t.rev))
    with progress() as update:
        report = run_scan(opts, targets, progress=update)
    return _same_archive(mark_pinned(report, opts.rev), targets, current, opts.sha256)


def _same_archive(report: ScanReport, targets: list[ScanTarget], pinned: Path, sha: str | None) -> ScanReport:
    """The archive releases holding the bytes of the pinned archive, marked as the current pin."""
    from vimesync.app.bump import same_archive

    if len(targets) != len(report.releases):
        return report
    releases = tuple(
        replace(r, pinned=True) if r.kind == "archive" and same_archive(t.source, pinned, sha) else r
        for r, t in zip(report.releases, targets, strict=True)
    )
    return replace(report, releases=releases)


def _merged(files: tuple[Path, ...]) -> ScanReport:
    from vimesync.check.scan import merge_scans, report_from_dict
    from vimesync.safefs import loads_json, read_text_input

    reports = []
    for f in files:
        text = read_text_input(f, max_bytes=MAX_MERGE_BYTES)
        reports.append(report_from_dict(loads_json(text, where=str(f)), where=str(f)))
    return merge_scans(reports)
