"""``carry``: bring the applicable upstream PRs into a new sync branch; ``--continue``, ``--skip``,
``--abort`` and ``--status`` of the carry in progress.

The carry's model (its entries, status and phase) is ``vimesync.carry.model``; here are the use
case, its request and its results, which write that model as the command's JSON document."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vimesync import git
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.carry.model import (
    Aborted,
    Carried,
    CarryConflict,
    CarryPhase,
    CarryRun,
    CarryStatus,
    DryRunItem,
    Item,
    SkippedItem,
    left_out,
)
from vimesync.carry.run import CarryOptions
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput, Interrupted, Terminated
from vimesync.outputs.model import Case, Findings, Suite
from vimesync.settings import Settings

if TYPE_CHECKING:
    from vimesync.carry.state import State


class CarryMode(str, Enum):
    """What a run of ``carry`` does: start a carry, or act on the one in progress."""

    START = "start"
    CONTINUE = "--continue"
    SKIP = "--skip"
    ABORT = "--abort"
    STATUS = "--status"


def _label(pr: int | None, sha: str, title: str) -> str:
    return f"#{pr} {title}" if pr is not None else f"{sha[:12]} (direct) {title}"


@dataclass(frozen=True)
class CarryResult:
    """A carry started, continued or skipped on: what it carried, skipped, planned or stopped at."""

    status: CarryStatus
    base: str = ""
    tip: str = ""
    carried: tuple[Carried, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    conflict: CarryConflict | None = None
    planned: tuple[DryRunItem, ...] = ()
    branch: str | None = None
    worktree: str | None = None
    pin_commit: str | None = None
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.CARRY

    @property
    def exit_code(self) -> int:
        return EXIT_CHECK_FAILED if self.status is CarryStatus.CONFLICT else EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {
            "status": self.status.value,
            "range": {"base": self.base, "tip": self.tip},
            "carried": [c.to_json() for c in self.carried],
            "skipped": [s.to_json() for s in self.skipped],
            "conflict": self.conflict.to_json() if self.conflict else None,
            "planned": [p.to_json() for p in self.planned],
            "branch": self.branch,
            "worktree": self.worktree,
            "pin_commit": self.pin_commit,
            "notes": list(self.notes),
            **({"message": "nothing to carry"} if self.status is CarryStatus.NOTHING else {}),
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        """One case per PR (or direct commit): carried passes, skipped is skipped with its reason,
        the one stopped at fails with its files; in a dry run, one that would conflict fails. No
        annotation: a conflict is in the worktree, not at a line of the checkout. (Built here,
        not in outputs/findings.py: the typed result belongs to this layer, after outputs.)"""
        cases = [Case(_label(c.pr, c.upstream_commit, c.title), "carry") for c in self.carried]
        for s in self.skipped:
            cases.append(Case(_label(s.pr, s.upstream_commit, s.title), "carry", skipped=s.reason))
        if self.conflict is not None:
            c = self.conflict
            files = ", ".join(f.path for f in c.files)
            detail = "\n".join(f"{f.path} ({f.why})" for f in c.files)
            name = _label(c.pr, c.upstream_commit, c.title)
            cases.append(Case(name, "carry", failure=f"conflict in {files}", detail=detail))
        for p in self.planned:
            failure = f"would conflict in {', '.join(p.conflict)}" if p.conflict else None
            cases.append(Case(_label(p.pr, p.upstream_commit, p.title), "carry (dry run)", failure=failure))
        summary = f"## Carry {self.base[:12]}..{self.tip[:12]}\n\n{self.status.value}: "
        summary += ", ".join(filter(None, (f"{len(self.carried):,} carried", left_out(self.skipped)))) + ".\n"
        return Findings((Suite(f"carry: {self.base[:12]}..{self.tip[:12]}", tuple(cases)),), (), summary)

    @classmethod
    def of(cls, run: CarryRun) -> CarryResult:
        """What a run of the carry ended with, as the command's result."""
        return cls(
            status=run.status,
            base=run.base,
            tip=run.tip,
            carried=tuple(run.carried),
            skipped=tuple(run.skipped),
            conflict=run.conflict,
            planned=tuple(run.planned),
            branch=run.branch,
            worktree=run.worktree,
            pin_commit=run.pin_commit,
            notes=tuple(run.notes),
        )


@dataclass(frozen=True)
class CarryStatusResult:
    """``--status``: the carry in progress, if any (the next items as the state keeps them)."""

    in_progress: bool
    status: CarryStatus | None = None
    branch: str = ""
    worktree: str = ""
    base: str = ""
    tip: str = ""
    done: int = 0
    total: int = 0
    phase: CarryPhase | None = None
    carried: tuple[Carried, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    conflict: CarryConflict | None = None
    next: tuple[Item, ...] = ()
    kind: Kind = Kind.CARRY_STATUS
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        if not self.in_progress:
            return document(self.kind, self.exit_code, {"in_progress": False})
        assert self.status is not None and self.phase is not None
        body = {
            "in_progress": True,
            "status": self.status.value,
            "branch": self.branch,
            "worktree": self.worktree,
            "base": self.base,
            "tip": self.tip,
            "done": self.done,
            "total": self.total,
            "phase": self.phase.value,
            "carried": [c.to_json() for c in self.carried],
            "skipped": [s.to_json() for s in self.skipped],
            "conflict": self.conflict.to_json() if self.conflict else None,
            "next": [i.to_json() for i in self.next],
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())  # --status checks nothing

    @classmethod
    def of(cls, state: State | None) -> CarryStatusResult:
        """Where the carry ``state`` describes stands (None: no carry in progress)."""
        if state is None:
            return cls(False)
        return cls(
            True,
            CarryStatus.CONFLICT if state.conflict else CarryStatus.INTERRUPTED,
            state.branch,
            state.worktree,
            state.base,
            state.tip,
            state.next,
            len(state.items),
            state.phase,
            tuple(state.carried),
            tuple(state.skipped),
            state.conflict,
            tuple(state.items[state.next :]),
        )


@dataclass(frozen=True)
class AbortResult:
    """``--abort``: what was removed (None: nothing the carry made was left to remove)."""

    branch: str | None
    worktree: str | None
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.CARRY
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    @classmethod
    def of(cls, aborted: Aborted) -> AbortResult:
        return cls(aborted.branch, aborted.worktree, aborted.notes)

    def to_json(self) -> dict[str, Any]:
        body = {"aborted": True, "branch": self.branch, "worktree": self.worktree, "notes": list(self.notes)}
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())  # --abort checks nothing


@dataclass(frozen=True)
class CarryRequest:
    """What carry's own flags say: the mode, and a new carry's options (``--range``, ``--policy``
    and the repositories are the sync's: the workspace's)."""

    mode: CarryMode = CarryMode.START
    options: CarryOptions = field(default_factory=CarryOptions)


def carry(
    ws: Workspace, request: CarryRequest, *, progress: Progress = no_progress
) -> CarryResult | CarryStatusResult | AbortResult:
    """Start a carry, or act on the one in progress (``request.mode``); ``progress``: told the walk
    and how many items are carried."""
    from vimesync.carry import session
    from vimesync.carry import state as state_mod

    mode = request.mode
    if mode is not CarryMode.START and (given := _new_carry_flags(ws, request.options)):
        raise BadInput(f"{', '.join(given)}: not used by {mode.value} (the carry in progress has its own)")
    repo = ws.require_downstream()
    if mode is CarryMode.STATUS:
        return CarryStatusResult.of(session.status(repo))
    if mode is CarryMode.ABORT:
        from vimesync.app.carrysync import put_back

        return AbortResult.of(put_back(repo) or session.abort(repo))
    try:
        return _run(ws, request, repo, progress)
    except (KeyboardInterrupt, Terminated) as exc:
        # A carry stopped by a signal (Ctrl-C, a CI timeout, ``timeout``) resumes like a killed
        # one: --continue reconciles the state with the branch. Said only when there is a carry.
        if not state_mod.exists(repo):
            raise
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        raise Interrupted(INTERRUPTED, signum=signum) from None


INTERRUPTED = "interrupted: `vimesync carry --continue` resumes"


def _new_carry_flags(ws: Workspace, options: CarryOptions) -> list[str]:
    """The flags of a new carry given to a mode that would ignore them."""
    f = ws.flags
    sync = (
        ("--range", f.range_),
        ("--policy", f.policy),
        ("--upstream", f.upstream),
        ("--pr-metadata", f.pr_metadata),
        ("--accept-similar", f.accept_similar or None),
    )
    given = options.given() + [flag for flag, value in sync if value]
    order = ["--range", "--pr", "--policy", "--branch", "--onto", "--worktree", "--squash", "--direct"]
    order += ["--dry-run", "--upstream", "--pr-metadata", "--accept-similar"]
    return sorted(given, key=order.index)


def _run(ws: Workspace, request: CarryRequest, repo: Path, progress: Progress) -> CarryResult:
    """Start, continue or skip on a carry (the modes that carry items)."""
    from vimesync.app import upstreamsteps
    from vimesync.carry import run as carry_run
    from vimesync.carry import session
    from vimesync.carry import state as state_mod
    from vimesync.carry.budget import Budget
    from vimesync.carry.model import CarryJob
    from vimesync.upstream.policy import load_policy
    from vimesync.upstream.translate import load_transform

    mode, cfg = request.mode, ws.config
    transform = load_transform(cfg)
    job = CarryJob(committer(repo, ws.settings), Budget.from_settings(ws.settings))
    if mode in (CarryMode.CONTINUE, CarryMode.SKIP):
        from vimesync.app.carrysync import carried_to, onto_sync

        ours = onto_sync(repo)
        go_on = session.resume if mode is CarryMode.CONTINUE else session.skip
        with progress(f"carry: {CARRYING}") as update:
            done = go_on(repo, transform, replace(job, progress=update))
        if ours is not None:  # onto a sync's branch: the sync's record of its carry moves with it
            carried_to(*ours, done)
        return CarryResult.of(done)
    options = request.options
    if state_mod.exists(repo):
        raise state_mod.in_progress(state_mod.state_path(repo))
    from vimesync.app.carrysync import carry_into_sync

    if (into_sync := carry_into_sync(ws, options, job, progress)) is not None:
        return CarryResult.of(into_sync)
    carry_run.check_direct(options.direct)
    upstream = ws.upstream
    if upstream is None:
        raise BadInput("no upstream repository given", hint="pass --upstream PATH or set [upstream] path")
    step = Phases(progress, "carry", 2)
    with step("walking the upstream range"):
        walked = upstreamsteps.walk(ws, at=git.resolve(repo, options.onto))
    policy = load_policy(ws.policy, ws.reader) if ws.policy else None
    with step(TRYING if options.dry_run else CARRYING) as update:
        job = replace(job, progress=update)
        done = carry_run.start(repo, cfg, transform, options, walked, policy, upstream=upstream, job=job)
    return CarryResult.of(done)


CARRYING = "carrying the upstream PRs"
TRYING = "merging the upstream PRs in memory (a dry run: nothing is written)"


def committer(repo: Path, settings: Settings) -> dict[str, str]:
    """The committer of the commits carry makes: GIT_COMMITTER_* of the job, else ``user.name``/
    ``user.email`` of the repository's own config or of ``~/.gitconfig``, else vimesync's."""
    from vimesync import git

    def clean(value: str | None) -> str | None:
        value = (value or "").strip()
        return value if value and not any(c in value for c in "\0\n<>") and len(value) < 200 else None

    who: dict[str, str] = {}
    for key in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"):
        if value := clean(settings.committer.get(key)):
            who[key] = value
    sources: list[list[str]] = [[]]
    home = settings.home / ".gitconfig" if settings.home is not None else None
    if home is not None and home.is_file():
        sources.append(["--file", str(home)])
    for key, env in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL")):
        for source in sources:
            if env in who:
                break
            out = git.run(repo, ["config", *source, "--get", key], check=False).decode("utf-8", "replace")
            if value := clean(out):
                who[env] = value
    return who
