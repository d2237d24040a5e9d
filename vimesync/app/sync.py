"""``vimesync sync``: walk, carry, patches check, audit, sop status and report in one run, from
the downstream checkout, stopping only where a human must decide (issue 22).

Each step is the use case of its own command (:mod:`vimesync.app.syncsteps`); what is done is
recorded after each step in the git directory (:mod:`vimesync.app.syncstate`), so ``--continue``
(after a conflict was resolved, a patch refreshed, paths reviewed, or CI finished) redoes no
finished step, and a sync killed between two steps goes on from the next one. A step that judged
the head (patches, audit, status, report) is redone when the sync branch has moved since.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.app import syncstate
from vimesync.app.carry import AbortResult, CarryMode, CarryRequest, CarryResult, CarryStatus, carry
from vimesync.app.result import Kind, document
from vimesync.app.syncstate import StepRecord, SyncState
from vimesync.app.syncsteps import CONTINUE, StepOutcome, Where, walk_figure
from vimesync.config import Config, load_config
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput, Interrupted, Terminated
from vimesync.outputs.model import Case, Findings, Suite
from vimesync.text import plural

REPORT_DEFAULT = Path(".vimesync") / "sync-report.md"  # at the checkout's root (keep .vimesync/ ignored)
HEAD_STEPS = ("patches", "audit", "status", "report")  # judged at the head: redone when it moved
INTERRUPTED = f"interrupted: `{CONTINUE}` resumes"


class SyncMode(str, Enum):
    START = "start"
    CONTINUE = "--continue"
    STATUS = "--status"
    ABORT = "--abort"


@dataclass(frozen=True)
class SyncRunRequest:
    """What the flags say (None/empty: not given)."""

    mode: SyncMode = SyncMode.START
    config: Path | None = None
    downstream: Path | None = None
    # carry's
    range_: str | None = None
    prs: tuple[int, ...] = ()
    direct: str = "skip"
    squash: bool = False
    onto: str = "HEAD"
    branch: str | None = None
    # the report's
    baseline: str | None = None
    skip_gate: tuple[str, ...] = ()
    publish: str | None = None
    output: Path | None = None
    environ: dict[str, str] = field(default_factory=dict)  # GIT_COMMITTER_* of the job

    def carry_flags(self) -> list[str]:
        given = (
            ("--range", self.range_),
            ("--pr", self.prs),
            ("--direct", self.direct if self.direct != "skip" else None),
            ("--squash", self.squash or None),
            ("--onto", self.onto if self.onto != "HEAD" else None),
            ("--branch", self.branch),
            ("--baseline", self.baseline),
        )
        return [flag for flag, value in given if value]


@dataclass(frozen=True)
class Step:
    """One step of this run: done now, or done before (``reused``)."""

    name: str
    kind: Kind
    ok: bool
    exit_code: int
    figure: str
    reused: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "figure": self.figure,
            "reused": self.reused,
        }


KINDS = {
    "walk": Kind.WALK,
    "carry": Kind.CARRY,
    "patches": Kind.CHECK,
    "audit": Kind.AUDIT,
    "status": Kind.STATUS,
    "report": Kind.REPORT,
}


@dataclass(frozen=True)
class SyncResult:
    steps: tuple[Step, ...]
    stopped: str | None = None  # the step it stopped at (None: every gate holds)
    decision: str | None = None
    next: str | None = None
    up_to_date: bool = False
    branch: str | None = None
    worktree: str | None = None
    report: str | None = None
    published: str | None = None
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.SYNC

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.stopped is None else EXIT_CHECK_FAILED

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {
            "status": "up to date" if self.up_to_date else ("stopped" if self.stopped else "done"),
            "steps": [s.to_json() for s in self.steps],
            "stopped": self.stopped,
            "decision": self.decision,
            "next": self.next,
            "branch": self.branch,
            "worktree": self.worktree,
            "report": self.report,
            "published": self.published,
            "notes": list(self.notes),
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        cases = tuple(
            Case(s.name, "sync", failure=None if s.ok else (self.decision or s.figure), detail=s.figure)
            for s in self.steps
        )
        return Findings((Suite("sync", cases),), (), "")


@dataclass(frozen=True)
class SyncStatusResult:
    """``--status``: the sync recorded here, if any."""

    state: SyncState | None
    kind: Kind = Kind.SYNC
    exit_code: int = EXIT_OK
    ok: bool = True

    def next_step(self) -> str | None:
        if self.state is None or self.state.finished:
            return None
        done = {s.name for s in self.state.steps if s.ok}
        return next((n for n in syncstate.STEPS if n not in done), None)

    def to_json(self) -> dict[str, Any]:
        s = self.state
        if s is None:
            return document(self.kind, self.exit_code, {"in_progress": False})
        body = {
            "in_progress": not s.finished,
            "finished": s.finished,
            "branch": s.branch,
            "worktree": s.worktree,
            "onto": s.onto,
            "baseline": s.baseline,
            "steps": [{**st.__dict__, "kind": KINDS[st.name].value} for st in s.steps],
            "next_step": self.next_step(),
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())


@dataclass(frozen=True)
class SyncAbortResult:
    removed: bool
    carry: AbortResult | None = None
    kind: Kind = Kind.SYNC
    exit_code: int = EXIT_OK
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        body = {
            "aborted": True,
            "removed": self.removed,
            "carry": self.carry.to_json() if self.carry else None,
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())


OnStep = Callable[[Step], None]


def sync(
    request: SyncRunRequest, *, on_step: OnStep | None = None
) -> SyncResult | SyncStatusResult | SyncAbortResult:
    """Run (or go on with, show, drop) the sync of this downstream."""
    r = request
    cfg = load_config(r.config, engines=False)
    checkout = _checkout(cfg, r.downstream)
    if r.mode is SyncMode.STATUS:
        return SyncStatusResult(syncstate.load(checkout) if syncstate.exists(checkout) else None)
    if r.mode is SyncMode.ABORT:
        return _abort(checkout, r)
    if r.mode is SyncMode.CONTINUE and (given := r.carry_flags()):
        raise BadInput(f"{', '.join(given)}: not used by --continue (the sync in progress has its own)")
    run = _SyncRun(r, checkout, cfg, on_step or (lambda step: None))
    try:
        return run.go()
    except (KeyboardInterrupt, Terminated, Interrupted) as exc:
        if not syncstate.exists(checkout):
            raise
        if isinstance(exc, Interrupted):
            signum = exc.exit_code - 128
        else:
            signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        raise Interrupted(INTERRUPTED, signum=signum) from None


def _checkout(cfg: Config, downstream: Path | None) -> Path:
    """The downstream's main worktree: ``sync --continue`` may run in the sync worktree."""
    from vimesync.carry import gitops
    from vimesync.repopaths import repository_path

    path = repository_path(downstream, cfg, "downstream_path") or Path.cwd()
    git.git_dir(path)
    return gitops.main_repository(path)


def _abort(checkout: Path, r: SyncRunRequest) -> SyncAbortResult:
    from vimesync.carry import state as carry_state

    if not syncstate.exists(checkout):
        syncstate.load(checkout)  # BadInput: no sync is in progress
    carried = None
    if carry_state.exists(checkout):
        result = carry(CarryRequest(CarryMode.ABORT, downstream=checkout, config=r.config))
        assert isinstance(result, AbortResult)
        carried = result
    syncstate.remove(checkout)
    return SyncAbortResult(True, carried)


class _SyncRun:
    """One run of the steps: records each in the state as it finishes."""

    def __init__(self, r: SyncRunRequest, checkout: Path, cfg: Config, on_step: OnStep) -> None:
        self.r, self.checkout, self.cfg, self.on_step = r, checkout, cfg, on_step
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.state: SyncState

    # -- the run ------------------------------------------------------------------------------

    def go(self) -> SyncResult:
        r = self.r
        if syncstate.exists(self.checkout):
            self.state = syncstate.load(self.checkout)
            if not self.state.finished and r.mode is SyncMode.START:
                raise BadInput(
                    "a sync is in progress in this repository",
                    hint=f"{CONTINUE} goes on, vimesync sync --status shows it, --abort drops it",
                )
            self._flags_anew()
            if self.state.finished:
                return self._recheck()
        elif r.mode is SyncMode.CONTINUE:
            syncstate.load(self.checkout)  # BadInput: no sync is in progress
            raise AssertionError("unreachable")
        else:
            self._refuse_early(r.publish, r.output)
            onto = git.resolve(self.checkout, r.onto)
            baseline = git.resolve(self.checkout, r.baseline) if r.baseline else onto
            self.state = SyncState(
                checkout=str(self.checkout),
                onto=onto,
                baseline=baseline,
                skip_gate=list(r.skip_gate),
                publish=r.publish,
                output=str(r.output.absolute()) if r.output else None,
            )
            syncstate.create(self.checkout, self.state)
        return self._steps()

    def _flags_anew(self) -> None:
        """Report flags given to --continue replace the ones the sync started with."""
        r, s = self.r, self.state
        if r.skip_gate:
            s.skip_gate = list(r.skip_gate)
        if r.publish is not None:
            s.publish = r.publish
        if r.output is not None:
            s.output = str(r.output.absolute())
        self._refuse_early(s.publish, Path(s.output) if s.output else None)

    def _refuse_early(self, publish: str | None, output: Path | None) -> None:
        from vimesync.app.report import refuse_early

        refuse_early(publish, output)  # the default's folder is made when the report is written

    def _steps(self) -> SyncResult:
        s = self.state
        if not self._done("walk"):
            self._walk()
        if not self._done("carry"):
            stop = self._carry()
            if stop is not None:
                return stop
        where = self._where()
        for name in HEAD_STEPS:
            if self._done(name, head=where.head):
                continue
            outcome = self._gate(name, where)
            self._record(outcome, where.head)
            if not outcome.ok:
                return self._stopped(outcome)
        s.finished = True
        syncstate.save(self.checkout, s)
        return self._result()

    def _done(self, name: str, *, head: str | None = None) -> bool:
        """A step done before is shown again, not redone (a head step: at the same head)."""
        rec = self.state.done(name)
        if rec is None or not rec.ok:
            return False
        if head is not None and rec.head != head:
            self.notes.append(f"{name}: the head moved to {head[:12]} since it ran, so it ran again")
            return False
        step = Step(rec.name, KINDS[rec.name], rec.ok, rec.exit_code, rec.figure, reused=True)
        self.steps.append(step)
        self.on_step(step)
        return True

    def _record(self, outcome: StepOutcome, head: str | None) -> None:
        rec = StepRecord(outcome.name, outcome.ok, outcome.exit_code, outcome.figure, head)
        self.state.record(rec)
        syncstate.save(self.checkout, self.state)
        step = Step(outcome.name, outcome.kind, outcome.ok, outcome.exit_code, rec.figure)
        self.steps.append(step)
        self.on_step(step)

    def _stopped(self, outcome: StepOutcome) -> SyncResult:
        return self._result(stopped=outcome.name, decision=outcome.decision, next_=outcome.next)

    def _result(self, **kw: Any) -> SyncResult:
        s = self.state
        return SyncResult(
            steps=tuple(self.steps),
            stopped=kw.get("stopped"),
            decision=kw.get("decision"),
            next=kw.get("next_"),
            up_to_date=kw.get("up_to_date", False),
            branch=s.branch,
            worktree=s.worktree,
            report=self._output() if s.done("report") else None,
            published=kw.get("published"),
            notes=tuple(self.notes),
        )

    def _output(self) -> str:
        return self.state.output or str(self.checkout / REPORT_DEFAULT)

    # -- walk and carry -----------------------------------------------------------------------

    def _walk(self) -> None:
        from vimesync.app.walk import WalkRequest, totals, walk

        r = self.r
        req = WalkRequest(
            range_=r.range_, downstream=self.checkout, downstream_rev=self.state.onto, config=r.config
        )
        result = walk(req).walk
        self.state.branch = r.branch or f"sync/{result.tip[:8]}"
        self._record(StepOutcome("walk", Kind.WALK, True, walk_figure(totals(result))), None)

    def _carry(self) -> SyncResult | None:
        """Start the carry, go on with the one in progress, or find the one that ended."""
        from vimesync.carry import gitops
        from vimesync.carry import state as carry_state

        r, s = self.r, self.state
        assert s.branch is not None
        ref = f"refs/heads/{s.branch}"
        if carry_state.exists(self.checkout):
            req = CarryRequest(
                CarryMode.CONTINUE, downstream=self.checkout, config=r.config, environ=r.environ
            )
        elif s.carry_started and gitops.ref_exists(self.checkout, ref):
            self._carry_ended(ref)  # killed after the carry ended, before it was recorded
            return None
        else:
            if not gitops.ref_exists(self.checkout, ref):
                s.carry_started = True
                syncstate.save(self.checkout, s)
            req = CarryRequest(
                CarryMode.START,
                range_=r.range_,
                prs=r.prs,
                branch=s.branch,
                onto=s.onto,
                squash=r.squash,
                direct=r.direct,
                downstream=self.checkout,
                config=r.config,
                environ=r.environ,
            )
        result = carry(req)
        assert isinstance(result, CarryResult)
        s.worktree = result.worktree or s.worktree
        if result.status is CarryStatus.CONFLICT:
            syncstate.save(self.checkout, s)
            c = result.conflict
            what = f"#{c.pr} {c.title}" if c and c.pr is not None else (c.title if c else "an item")
            files = ", ".join(f.path for f in c.files) if c else ""
            outcome = StepOutcome(
                "carry",
                Kind.CARRY,
                False,
                f"{len(result.carried)} carried, stopped at a conflict: {what}",
                decision=f"a carry conflict in {what}: {files}",
                next=(
                    f"resolve the files in {result.worktree}, git add them, then {CONTINUE}"
                    " (or vimesync carry --skip, then the same)"
                ),
            )
            return self._stopped_unrecorded(outcome)
        if result.status is CarryStatus.NOTHING:
            s.branch = None
            figure = "nothing to carry"
        else:
            s.branch = result.branch or s.branch
            figure = f"{len(result.carried)} carried onto {s.branch}"
            if result.skipped:
                figure += f", {len(result.skipped)} skipped"
        self._record(StepOutcome("carry", Kind.CARRY, True, figure), None)
        return None

    def _stopped_unrecorded(self, outcome: StepOutcome) -> SyncResult:
        step = Step(outcome.name, outcome.kind, outcome.ok, outcome.exit_code, outcome.figure)
        self.steps.append(step)
        self.on_step(step)
        return self._stopped(outcome)

    def _carry_ended(self, ref: str) -> None:
        from vimesync.carry import gitops

        s = self.state
        tip = gitops.branch_at(self.checkout, ref) or s.onto
        count = git.run(self.checkout, ["rev-list", "--count", f"{s.onto}..{tip}"]).decode().strip()
        listed = [p for p, at in gitops.worktrees(self.checkout).items() if at == ref]
        s.worktree = str(listed[0]) if listed else s.worktree
        figure = f"{count} commits onto {s.branch} (the carry had ended)"
        self._record(StepOutcome("carry", Kind.CARRY, True, figure), None)

    # -- the gates at the head ----------------------------------------------------------------

    def _where(self) -> Where:
        """The sync worktree and its head, once git agrees it is the sync branch's; the checkout
        at ``onto`` when nothing was carried."""
        from vimesync.carry import gitops

        s = self.state
        if s.branch is None:
            return Where(self.checkout, s.onto, self.r.config, s.baseline)
        ref = f"refs/heads/{s.branch}"
        head = gitops.branch_at(self.checkout, ref)
        if head is None:
            raise BadInput(
                f"the sync branch {s.branch} is gone", hint="vimesync sync --abort clears the sync's state"
            )
        listed = gitops.worktrees(self.checkout)
        wt = Path(s.worktree) if s.worktree else None
        if wt is None or listed.get(wt) != ref:
            raise BadInput(
                f"the sync branch {s.branch} is not checked out in {wt}",
                hint="check it out there again, or vimesync sync --abort",
            )
        return Where(wt, head, self._config_in(wt), s.baseline)

    def _config_in(self, worktree: Path) -> Path | None:
        """The checkout's config file, as the sync branch has it (``--config`` outside: as given)."""
        file = self.cfg.file
        if file is None:
            return self.r.config
        try:
            rel = Path(file).absolute().relative_to(self.checkout)
        except ValueError:
            return self.r.config
        return worktree / rel if (worktree / rel).is_file() else self.r.config

    def _gate(self, name: str, where: Where) -> StepOutcome:
        from vimesync.app import syncsteps

        s = self.state
        gates = tuple(s.skip_gate)
        if name == "patches":
            return syncsteps.patches(where, load_config(where.config, cwd=where.downstream))
        if name == "audit":
            return syncsteps.audit(where)
        if name == "status":
            return syncsteps.status(where, gates, s.publish)
        outcome, url = syncsteps.report(where, gates, s.publish, Path(self._output()))
        if url:
            self.notes.append(f"published: {url}")
        return outcome

    def _recheck(self) -> SyncResult:
        """A finished sync run again: up to date when nothing is left to carry and every gate
        still holds (nothing is written); else it stops where the gates do."""
        from vimesync.app import syncsteps
        from vimesync.app.walk import WalkRequest, totals, walk

        where = self._where()
        req = WalkRequest(
            range_=self.r.range_, downstream=where.downstream, downstream_rev=where.head, config=where.config
        )
        counts = totals(walk(req).walk)
        step = Step("walk", Kind.WALK, True, 0, walk_figure(counts))
        self.steps.append(step)
        self.on_step(step)
        if counts["applicable"]:
            s = self.state
            return self._result(
                stopped="walk",
                decision=(
                    f"the upstream has {plural(counts['applicable'], 'applicable PR')}"
                    " the finished sync does not carry"
                ),
                next_=(
                    f"merge {s.branch}, then vimesync sync --abort (it forgets the finished sync)"
                    " and vimesync sync"
                ),
            )
        outcome = syncsteps.status(where, tuple(self.state.skip_gate), self.state.publish)
        step = Step("status", outcome.kind, outcome.ok, outcome.exit_code, outcome.figure)
        self.steps.append(step)
        self.on_step(step)
        if outcome.ok:
            return self._result(up_to_date=True)
        self.state.finished = False
        self.state.forget("status", "report")
        syncstate.save(self.checkout, self.state)
        return self._stopped(outcome)
