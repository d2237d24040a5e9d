"""The steps of ``vimesync sync``, each a call into the use case of its own command, and the one
line (its figure) each says; where a step stops, the decision it leaves and the command after it.

Nothing here keeps state: :mod:`vimesync.app.sync` runs the steps in order and records them.
"""

from __future__ import annotations

import re
import shlex
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from vimesync.app.flags import CiFlags, EngineFlags
from vimesync.app.progress import Progress, ProgressFn, no_progress
from vimesync.app.result import Kind
from vimesync.app.workspace import Workspace
from vimesync.text import agree, of_total, plural

CONTINUE = "vimesync sync --continue"
SHOWN = 5  # paths a stop names and pastes into its command (more: --all-unreviewed)


def sh(*words: str) -> str:
    """Words as one shell command line: each quoted when it needs it (a path, a branch name)."""
    return " ".join(shlex.quote(w) for w in words)


def in_dir(path: Path | str) -> str:
    """``in PATH:`` before a command, the path quoted as a shell would need it."""
    return f"in {shlex.quote(str(path))}:"


@dataclass(frozen=True)
class StepOutcome:
    """What one step said: its kind (the document of its own command), ok, exit code, figure;
    and when it did not hold, the decision it leaves and the command that moves on."""

    name: str
    kind: Kind
    ok: bool
    figure: str
    decision: str | None = None
    next: str | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def walk_figure(totals: dict[str, int]) -> str:
    parts = [f"{totals[k]} {k}" for k in ("applicable", "excluded", "mirrored") if totals.get(k)]
    figure = plural(totals["prs"], "PR") + (f" ({', '.join(parts)})" if parts else "")
    if totals.get("direct_commits"):
        figure += f", {plural(totals['direct_commits'], 'direct commit')}"
    return figure


# What each step is doing, as its progress says it ("sync 3/6: checking the patch stack").
DOING = {
    "walk": "walking the upstream range",
    "carry": "carrying the upstream PRs",
    "patches": "checking the patch stack",
    "audit": "auditing the changed paths",
    "status": "evaluating the gates",
    "report": "writing the report",
}


def progress_of(progress: Progress, name: str) -> AbstractContextManager[ProgressFn | None]:
    """The progress context of one step of the sync, numbered among them."""
    return progress(f"sync {list(DOING).index(name) + 1}/{len(DOING)}: {DOING[name]}")


def patches(ws: Workspace, engine: EngineFlags, progress: Progress = no_progress) -> StepOutcome:
    """``patches check`` of every engine at its pin, as the sync's head holds the stack."""
    from vimesync.app.check import check

    if not ws.config.engines:
        return StepOutcome("patches", Kind.CHECK, True, "no engine pinned: nothing to check")
    with progress_of(progress, "patches"):
        outcome = check(ws, engine, progress=progress)
    parts, failed = [], []
    for r in outcome.reports:
        label = f"{r.engine}: " if len(outcome.reports) > 1 else ""
        applied = sum(1 for p in r.patches if p.ok)
        part = f"{label}{applied:,} {agree(applied, 'applies', 'apply')}"
        if skipped := sum(1 for p in r.patches if p.skipped):
            part += f", {skipped:,} not tried after a failure"
        if r.python is not None:
            part += f", {plural(r.python.files, 'file')} {agree(r.python.files, 'parses', 'parse')}"
        else:
            part += ", not parsed"
        parts.append(part)
        failed += [p.name for p in r.patches if not p.ok and not p.skipped]
        if r.python is not None and not r.parse_ok:
            failed.append(
                plural(len(r.python.failed) + len(r.python.conflict_markers), "file") + " not parsing"
            )
    if outcome.ok:
        return StepOutcome("patches", Kind.CHECK, True, "; ".join(parts))
    what = ", ".join(failed[:5]) or "the stack"
    return StepOutcome(
        "patches",
        Kind.CHECK,
        False,
        f"{'; '.join(parts)}; failing: {what}",
        decision=f"the patch stack does not hold at its pin ({what})",
        next=(
            f"in {ws.downstream}: vimesync pin bump --refresh (or edit the patch), commit, then {CONTINUE}"
        ),
    )


def audit(ws: Workspace, progress: Progress = no_progress) -> StepOutcome:
    """The changed-path audit of the sync branch against its baseline."""
    from vimesync.app.audit import audit_sync

    with progress_of(progress, "audit"):
        result = audit_sync(ws, progress=progress).audit
    if result.ok:
        figure = f"{plural(len(result.paths), 'changed path')}, all reviewed or verified"
        return StepOutcome("audit", Kind.AUDIT, True, figure)
    left = [p.path for p in result.paths if not p.ok]
    unreviewed, stale = len(result.unreviewed), len(result.stale)
    verb = "needs" if len(left) == 1 else "need"
    figure = f"{plural(len(left), 'path')} {verb} review ({unreviewed} unreviewed, {stale} stale)"
    shown = " ".join(left[:SHOWN]) + (" ..." if len(left) > SHOWN else "")
    baseline = ws.require_baseline()[:12]
    if len(left) > SHOWN:  # every one, as the audit lists them: never a path pasted into a shell
        review = f"vimesync audit review --all-unreviewed --by NAME --baseline {baseline}"
    else:  # a path is one quoted word, after `--` (one that starts with '-' is no option)
        review = f"vimesync audit review --by NAME --baseline {baseline} -- {sh(*left)}"
    return StepOutcome(
        "audit",
        Kind.AUDIT,
        False,
        figure,
        decision=f"{figure}: {shown}",
        next=f"{in_dir(ws.require_downstream())} {review}, then {CONTINUE}",
    )


def status(
    ws: Workspace, engine: EngineFlags, ci: CiFlags, publish: str | None, progress: Progress = no_progress
) -> StepOutcome:
    """Every gate of the SOP at the head (``sop status``): CI and images included (the CI of the
    PR it publishes to, when it does)."""
    from vimesync.app.status import StatusRequest, sop_status

    request = StatusRequest(engine=engine, ci=ci, publish=publish)
    with progress_of(progress, "status"):
        gates = sop_status(ws, request, progress=progress).status.gates
    unmet = [g for g in gates if not g.ok]
    if not unmet:
        off = sum(1 for g in gates if g.state == "off")
        figure = "every gate holds" + (f" ({len(gates) - off:,} held, {off:,} off)" if off else "")
        if any(g.state == "blocked" for g in gates):
            from vimesync.sop.gates import gates_verdict

            figure = gates_verdict(gates)
        return StepOutcome("status", Kind.STATUS, True, figure)
    held = len(gates) - len(unmet)
    figure = f"{of_total(held, len(gates), 'gate')} {agree(held, 'holds', 'hold')}; not met: " + ", ".join(
        f"{g.name} ({g.state})" for g in unmet
    )
    first = unmet[0]
    decision = f"{first.name}: {first.detail}"
    if first.name == "carried" and (prs := re.findall(r"#(\d+)", first.detail)):
        # the PRs the head does not carry (a carry --skip left them out): carried onto the sync's
        # branch, in its worktree (vimesync.app.carrysync)
        carry = sh("vimesync", "carry", *(w for n in prs for w in ("--pr", n)))
        next_ = f"{in_dir(ws.require_downstream())} {carry}, then {CONTINUE}"
    elif first.name == "ci":
        # "exact-head CI: pending at 1a2b3c4d"; a detail that names exact-head CI itself, as it is.
        named = first.detail.lower().startswith("exact-head ci")
        decision = "e" + first.detail[1:] if named else f"exact-head CI: {first.detail}"
        next_ = f"re-run later: {CONTINUE} reads it again" + (f" ({first.command})" if first.command else "")
    else:
        next_ = f"{first.command or 'see vimesync sop status'}, then {CONTINUE}"
    return StepOutcome("status", Kind.STATUS, False, figure, decision=decision, next=next_)


def report(
    ws: Workspace,
    engine: EngineFlags,
    ci: CiFlags,
    publish: str | None,
    output: Path,
    progress: Progress = no_progress,
) -> tuple[StepOutcome, str | None]:
    """The sync report written to ``output`` (and published); returns the published URL."""
    from vimesync.app.report import ReportRequest, make_report, publish_report
    from vimesync.report.markdown import render_markdown
    from vimesync.safefs import write_atomic

    request = ReportRequest(engine=engine, ci=ci, publish=publish)
    with progress_of(progress, "report"):
        result = make_report(ws, request, progress=progress)
    # the default folder (.vimesync/) is made, never through a symlink
    write_atomic(output, render_markdown(result.report).encode("utf-8"), mkdirs=True, what="--output")
    figure = f"written to {output}"
    url = None
    if publish is not None:
        done = publish_report(publish, result, ws.settings.github)
        url = done.url or done.target
        figure += f", published to {url}"
    if result.ok:
        return StepOutcome("report", Kind.REPORT, True, figure), url
    return (
        StepOutcome(
            "report",
            Kind.REPORT,
            False,
            figure + "; a gate it covers does not hold",
            decision="the report's gates do not hold",
            next=f"read {output}, then {CONTINUE}",
        ),
        url,
    )
