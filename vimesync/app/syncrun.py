"""One run of ``vimesync sync``'s steps: each recorded in the sync's state as it finishes.

The walk and the carry start from the checkout; the gate steps (patches, audit, status, report)
judge the sync's head through one workspace of it, read from the head commit.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.app import synckept, syncstate
from vimesync.app.carry import CarryMode, CarryRequest, CarryResult, carry
from vimesync.app.flags import CiFlags, SyncFlags
from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind
from vimesync.app.syncabort import refusal_hint
from vimesync.app.syncresult import (
    HEAD_STEPS,
    KINDS,
    REPORT_DEFAULT,
    OnStep,
    Step,
    SyncMode,
    SyncResult,
    SyncRunRequest,
)
from vimesync.app.syncstate import StepRecord, SyncState
from vimesync.app.syncsteps import CONTINUE, StepOutcome, in_dir, progress_of, walk_figure
from vimesync.app.syncwalk import Walked, keep, walked_here
from vimesync.app.workspace import Reading, Workspace
from vimesync.carry import state as carry_state
from vimesync.carry.model import CarryStatus, left_out
from vimesync.carry.run import CarryOptions, check_direct
from vimesync.errors import BadInput
from vimesync.readers import RecordingReader
from vimesync.text import plural


class SyncRun:
    """One run of the steps: records each in the state as it finishes."""

    def __init__(
        self,
        r: SyncRunRequest,
        ws: Workspace,
        checkout: Path,
        on_step: OnStep,
        progress: Progress = no_progress,  # what each step shows while it runs
    ) -> None:
        self.r, self.ws, self.checkout, self.on_step, self.progress = r, ws, checkout, on_step, progress
        self.here: Workspace  # the checkout as its working tree holds it (the walk and carry start there)
        self.walked: Walked | None = None  # this run's walk step, for the head to take (syncwalk)
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
            self._as_started()
            if self.state.finished:
                return self._recheck()
        elif r.mode is SyncMode.CONTINUE:
            syncstate.load(self.checkout)  # BadInput: no sync is in progress
            raise AssertionError("unreachable")
        else:
            out = r.output
            self._refuse_early(out.publish, out.output)
            onto = git.resolve(self.checkout, r.carry.onto)
            flags, carry = self.ws.flags, r.carry
            check_direct(carry.direct)  # before the state keeps it
            self.state = SyncState(
                checkout=str(self.checkout),
                onto=onto,
                baseline=git.resolve(self.checkout, flags.baseline) if flags.baseline else onto,
                branch=carry.branch,
                skip_gate=list(r.ci.skip_gate),
                range=flags.range_,
                upstream=str(flags.upstream.absolute()) if flags.upstream else None,
                prs=list(carry.prs),
                direct="include" if carry.direct == "include" else "skip",
                squash=carry.squash,
                carry_worktree=str(carry.worktree.absolute()) if carry.worktree else None,
                ci_repo=r.ci.repo,
                ci_pr=r.ci.pr,
                publish=out.publish,
                output=str(out.output.absolute()) if out.output else None,
            )
            syncstate.create(self.checkout, self.state)
            self._as_started()
        return self._steps()

    def _as_started(self) -> None:
        """The range and upstream the sync started with, whichever run this is: --continue takes
        neither anew, and without them it would walk and audit the config's range."""
        s = self.state
        upstream = Path(s.upstream) if s.upstream else None
        self.ws = replace(self.ws, flags=replace(self.ws.flags, range_=s.range, upstream=upstream))
        self.here = self.ws.elsewhere(self.checkout, worktree=RecordingReader())

    def _flags_anew(self) -> None:
        """Report flags given to --continue replace the ones the sync started with."""
        r, s = self.r, self.state
        if r.ci.skip_gate:
            s.skip_gate = list(r.ci.skip_gate)
        if r.ci.repo is not None:
            s.ci_repo = r.ci.repo
        if r.ci.pr is not None:
            s.ci_pr = r.ci.pr
        if r.output.publish is not None:
            s.publish = r.output.publish
        if r.output.output is not None:
            s.output = str(r.output.output.absolute())
        self._refuse_early(s.publish, Path(s.output) if s.output else None)

    def _refuse_early(self, publish: str | None, output: Path | None) -> None:
        from vimesync.app.report import refuse_early

        # the default's folder is made when the report is written
        refuse_early(publish, output, self.ws.settings.github)

    def _steps(self) -> SyncResult:
        s = self.state
        if not self._done("walk"):
            self._walk()
        # A carry in progress goes on first: the sync's own, or a carry --pr N onto its branch
        if carry_state.exists(self.checkout) or not self._done("carry"):
            stop = self._carry()
            if stop is not None:
                return stop
        # one walk per sync, and what an earlier run worked out at this head (app/synckept.py)
        with self._at_head() as ws, synckept.shared(self.checkout, ws, self.walked, self.r.engine):
            assert ws.head is not None
            for name in HEAD_STEPS:
                if self._done(name, head=ws.head):
                    continue
                outcome = self._gate(name, ws)
                self._record(outcome, ws.head)
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
        from vimesync.app import upstreamsteps
        from vimesync.app.walk import totals

        with progress_of(self.progress, "walk"):
            result = upstreamsteps.walk(self.here, at=self.state.onto, progress=self.progress)
        self.walked = walked_here(self.here, result, self.state.onto)
        keep(self.checkout, self.walked)
        self.state.branch = self.state.branch or f"sync/{result.tip[:8]}"
        self._record(StepOutcome("walk", Kind.WALK, True, walk_figure(totals(result))), None)

    def _carry(self) -> SyncResult | None:
        """Start the carry, go on with the one in progress, or find the one that ended."""
        from vimesync.carry import gitops

        s = self.state
        assert s.branch is not None
        ref = f"refs/heads/{s.branch}"
        here = self.here
        if carry_state.exists(self.checkout):
            req = CarryRequest(CarryMode.CONTINUE)
            # the carry in progress has its own range and upstream (its state): none passed on
            here = replace(here, flags=replace(here.flags, range_=None, upstream=None))
        elif s.carry_started and gitops.ref_exists(self.checkout, ref):
            self._carry_ended(ref)  # killed after the carry ended, before it was recorded
            return None
        else:
            if gitops.ref_exists(self.checkout, ref):
                # not this sync's (it has not started its carry): carry would refuse it too, with
                # a hint for its own flags; --continue cannot take a new --branch
                raise BadInput(
                    f"branch {s.branch} already exists; vimesync sync never rewrites a branch",
                    hint=refusal_hint(self.checkout, s.branch),
                )
            s.carry_started = True
            syncstate.save(self.checkout, s)
            worktree = Path(s.carry_worktree) if s.carry_worktree else None
            options = CarryOptions(tuple(s.prs), s.branch, s.onto, worktree, s.squash, s.direct)
            req = CarryRequest(CarryMode.START, options)
        onto_ours = s.done("carry") is not None  # a carry onto the branch after the sync's ended
        with progress_of(self.progress, "carry"):
            result = carry(here, req, progress=self.progress)
        assert isinstance(result, CarryResult)
        if onto_ours:  # the record of where the sync's carry ended: as that carry moved it
            s.carried = syncstate.load(self.checkout).carried
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
                    f"resolve the files {in_dir(result.worktree or '')[:-1]}, git add them, then {CONTINUE}"
                    " (or vimesync carry --skip, then the same)"
                ),
            )
            return self._stopped_unrecorded(outcome)
        if result.status is CarryStatus.NOTHING:
            s.branch = None
            figure = "nothing to carry"
        else:
            s.branch = result.branch or s.branch
            if not onto_ours:
                s.carried = gitops.branch_at(self.checkout, f"refs/heads/{s.branch}")
            figure = f"{len(result.carried)} carried onto {s.branch}"
            if result.skipped:
                figure += f", {left_out(result.skipped)}"
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
        figure = f"{plural(int(count or 0), 'commit')} onto {s.branch} (the carry had ended)"
        self._record(StepOutcome("carry", Kind.CARRY, True, figure), None)

    # -- the gates at the head ----------------------------------------------------------------

    def _sync_head(self) -> tuple[Path, str]:
        """The sync worktree and its head, once git agrees it is the sync branch's; the checkout
        at ``onto`` when nothing was carried."""
        from vimesync.carry import gitops

        s = self.state
        if s.branch is None:
            return self.checkout, s.onto
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
        return wt, head

    def _config_in(self, worktree: Path) -> Path | None:
        """The checkout's config file, as the sync branch has it (``--config`` outside: as given)."""
        file = self.ws.checkout.file
        if file is None:
            return self.ws.flags.config
        try:
            rel = Path(file).absolute().relative_to(self.checkout)
        except ValueError:
            return self.ws.flags.config
        return worktree / rel if (worktree / rel).is_file() else self.ws.flags.config

    def _at_head(self, *, reading: Reading = "head") -> Workspace:
        """The workspace of the sync's head: its worktree, the config found there, its baseline."""
        downstream, head = self._sync_head()
        upstream = self.ws.flags.upstream
        flags = SyncFlags(
            config=self._config_in(downstream), upstream=upstream, downstream=downstream, head=head
        )
        if reading == "head":
            flags = replace(flags, baseline=self.state.baseline)
        else:
            flags = replace(flags, range_=self.ws.flags.range_)
        return Workspace.resolve(flags, self.ws.settings, reading=reading, cwd=self.ws.cwd)

    def _ci(self) -> CiFlags:
        """Where the head's CI is read (--ci-repo, --ci-pr) and the gates switched off: what the
        sync started with, or what --continue gives anew."""
        s = self.state
        return replace(self.r.ci, skip_gate=tuple(s.skip_gate), repo=s.ci_repo, pr=s.ci_pr)

    def _gate(self, name: str, ws: Workspace) -> StepOutcome:
        from vimesync.app import syncsteps

        s = self.state
        engine = self.r.engine
        if name == "patches":
            return syncsteps.patches(ws, engine, self.progress)
        if name == "audit":
            return syncsteps.audit(ws, self.progress)
        if name == "status":
            return syncsteps.status(ws, engine, self._ci(), s.publish, self.progress)
        output = Path(self._output())
        outcome, url = syncsteps.report(ws, engine, self._ci(), s.publish, output, self.progress)
        if url:
            self.notes.append(f"published: {url}")
        return outcome

    def _recheck(self) -> SyncResult:
        """A finished sync run again: up to date when nothing is left to carry and every gate
        still holds (nothing is written); else it stops where the gates do."""
        from vimesync.app import syncsteps, upstreamsteps
        from vimesync.app.walk import totals

        with self._at_head(reading="worktree") as here:
            counts = totals(upstreamsteps.walk(here, at=here.head))
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
        with self._at_head() as ws:
            outcome = syncsteps.status(ws, self.r.engine, self._ci(), self.state.publish, self.progress)
        step = Step("status", outcome.kind, outcome.ok, outcome.exit_code, outcome.figure)
        self.steps.append(step)
        self.on_step(step)
        if outcome.ok:
            return self._result(up_to_date=True)
        self.state.finished = False
        self.state.forget("status", "report")
        syncstate.save(self.checkout, self.state)
        return self._stopped(outcome)
