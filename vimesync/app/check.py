"""``patches check``: the patch stack applied to the exact pinned source, every Python file parsed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.check.model import CheckOptions, CheckReport, ProgressFn
from vimesync.outputs.model import Findings


@dataclass(frozen=True)
class CheckOutcome:
    """One report per engine checked; the notes the plan made (a flag over a pin, ...)."""

    reports: tuple[CheckReport, ...]
    notes: tuple[str, ...] = ()
    export: Path | None = None
    kind: Kind = Kind.CHECK

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.reports)

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.check.model import checks_to_dict

        return document(self.kind, self.exit_code, checks_to_dict(self.reports))

    def findings(self) -> Findings:
        from vimesync.outputs.findings import check_findings

        found = [check_findings(r) for r in self.reports]
        return Findings(
            tuple(s for f in found for s in f.suites),
            tuple(a for f in found for a in f.annotations),
            "\n".join(f.summary for f in found),
        )


def check(ws: Workspace, flags: EngineFlags, *, progress: Progress = no_progress) -> CheckOutcome:
    """Every engine the flags (or the config) name, checked one after the other."""
    plan = ws.engine_plan(flags, require_exact=True)
    reports = []
    for opts in plan:
        with progress() as update:
            reports.append(checked(ws, opts, update))
    notes = tuple(note for opts in plan for note in opts.notes)
    return CheckOutcome(tuple(reports), notes, flags.export)


def checked(ws: Workspace, opts: CheckOptions, progress: ProgressFn | None = None) -> CheckReport:
    """The patch stack of one engine applied and parsed (``run_check``), once per workspace and
    options: the patches step of a sync, its status and its report share it (and a later run of
    the sync takes the one it kept: app/synccheck.py, without loading the check at all)."""

    def run() -> CheckReport:
        from vimesync.check.run import run_check

        return run_check(opts, progress=progress)

    return ws.once(("check", opts), run)
