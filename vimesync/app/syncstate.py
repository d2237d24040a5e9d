"""Where ``vimesync sync`` stands, kept in the repository's git directory (never in a work tree).

``<git common dir>/vimesync-sync.json`` exists from the moment a sync starts until ``--abort``
removes it; a finished sync keeps it (``finished``), so the next ``sync`` can say "up to date".
It is created with O_EXCL (two syncs cannot both start), rewritten atomically after each step,
bounded, and decoded by its field types on read (:class:`vimesync.statefile.StateFile`): a value
vimesync never writes is refused, and the paths it names are used only after git agrees (the
worktree must be the one with the sync branch checked out; see :func:`vimesync.app.sync`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from vimesync import git
from vimesync.carry import state as carry_state
from vimesync.errors import BadInput
from vimesync.safefs import CONTROL, Range, Size, Text
from vimesync.statefile import Location, StateFile
from vimesync.upstream.model import WalkResult

STATE_NAME = "vimesync-sync.json"
WALK_NAME = "vimesync-sync-walk.json"  # the walk step's walk, for a later run's head to take
HEAD_NAME = "vimesync-sync-head.json"  # what the head worked out (app/synckept.py)
CHECK_NAME = "vimesync-sync-check.json"  # the head's patch check (app/synccheck.py)
VERSION = 1
MAX_STATE = 256 << 10  # a sync's state is a few hundred bytes: anything past this is not ours
MAX_WALK = 16 << 20  # a walk of 2,000 PRs is ~2 MB: a larger one is walked again, not kept
MAX_FIGURE = 500  # characters of a step's figure the state keeps
STEPS = ("walk", "carry", "patches", "audit", "status", "report")

Oid = Annotated[str, Text(pattern=r"[0-9a-f]{40}|[0-9a-f]{64}", what="a full commit sha")]
AbsolutePath = Location
Short = Annotated[str, Text(min=1, max=299, forbid=CONTROL, what="a name")]


@dataclass
class StepRecord:
    """One finished step: its figure, and the head it judged (None: a step not about the head)."""

    name: Annotated[str, Text(check=STEPS.__contains__, what="a step's name")]
    ok: bool
    exit_code: Annotated[int, Range(0, 1)]
    figure: Annotated[str, Text(max=MAX_FIGURE, forbid=CONTROL, what="one line")]
    head: Oid | None = None


@dataclass
class SyncState:
    checkout: AbsolutePath  # the repository the sync was started from (its main worktree)
    onto: Oid  # the downstream commit the sync branch starts from
    baseline: Oid  # the pre-sync commit the audit compares against (--baseline, else onto)
    branch: Annotated[str, Text(max=255, forbid=CONTROL, what="a branch name")] | None = None  # the
    # sync branch (known once the walk named the tip)
    worktree: AbsolutePath | None = None  # its linked worktree (known once the carry made it)
    carry_started: bool = False
    carried: Oid | None = None  # the sync branch's tip when the carry this sync ran ended: --abort
    # removes the branch (and its worktree) only while it is still there (nothing committed since)
    steps: Annotated[list[StepRecord], Size(len(STEPS))] = field(default_factory=list)
    finished: bool = False
    # What the flags said when it started: --continue takes them again unless given anew.
    skip_gate: Annotated[list[Short], Size(20)] = field(default_factory=list)
    # What only a new sync takes (SyncRunRequest.started_with): --continue goes on with these.
    range: Short | None = None  # --range, as given
    upstream: AbsolutePath | None = None  # --upstream
    prs: Annotated[list[Annotated[int, Range(1, 10**9 - 1)]], Size(1000)] = field(default_factory=list)
    direct: Literal["skip", "include"] = "skip"
    squash: bool = False
    carry_worktree: AbsolutePath | None = None  # --worktree: where the carry makes the sync's worktree
    ci_repo: Short | None = None  # --ci-repo: where the head's CI is read (checked where it is used)
    ci_pr: Annotated[int, Range(1, 10**9 - 1)] | None = None  # --ci-pr
    publish: Short | None = None
    output: AbsolutePath | None = None
    version: Literal[1] = 1

    def done(self, name: str) -> StepRecord | None:
        return next((s for s in self.steps if s.name == name), None)

    def record(self, step: StepRecord) -> None:
        step.figure = step.figure if len(step.figure) <= MAX_FIGURE else step.figure[: MAX_FIGURE - 1] + "…"
        self.steps = [s for s in self.steps if s.name != step.name] + [step]
        self.steps.sort(key=lambda s: STEPS.index(s.name))

    def forget(self, *names: str) -> None:
        self.steps = [s for s in self.steps if s.name not in names]


@dataclass
class WalkMemo:
    """The walk step's walk, kept beside the state so that the head of a later run (``--continue``)
    takes it instead of walking again: only when ``inputs``, the digest of everything the walk
    rests on (:func:`vimesync.app.syncwalk.digest`), is the head's own."""

    inputs: Annotated[str, Text(pattern=r"[0-9a-f]{64}", what="a sha256 digest")]
    result: WalkResult
    version: Literal[1] = 1


def walk_file(repo: Path) -> StateFile[WalkMemo]:
    """Where the walk step's walk is kept (the common git dir, as the state)."""
    return StateFile.of(
        repo,
        WALK_NAME,
        WalkMemo,
        max_bytes=MAX_WALK,
        what="kept walk",
        hint="vimesync sync --abort removes it",
    )


def state_file(repo: Path) -> StateFile[SyncState]:
    """The sync's state file of ``repo`` (any of its worktrees)."""
    return StateFile.of(
        repo,
        STATE_NAME,
        SyncState,
        max_bytes=MAX_STATE,
        what="sync state",
        hint="vimesync sync --abort removes it",
    )


def state_path(repo: Path) -> Path:
    return state_file(repo).path


def exists(repo: Path) -> bool:
    return state_file(repo).exists()


def create(repo: Path, state: SyncState) -> None:
    """Write the first state, refusing when one exists (O_EXCL: two syncs cannot both start)."""
    file = state_file(repo)
    busy = BadInput(
        f"a sync is already in progress in this repository ({file.path})",
        hint="vimesync sync --status shows it; --continue goes on, --abort drops it",
    )
    file.create(state, busy)


def save(repo: Path, state: SyncState) -> None:
    state_file(repo).save(state)


def remove(repo: Path) -> None:
    state_file(repo).remove()
    walk_file(repo).remove()
    for name in (HEAD_NAME, CHECK_NAME):  # app/synckept.py's, app/synccheck.py's
        (git.common_dir(repo) / name).unlink(missing_ok=True)


def load(repo: Path) -> SyncState:
    """The sync recorded here; BadInput when there is none, ConfigError when it is not ours."""
    state = state_file(repo).read(_rules)
    if state is None:
        raise BadInput("no sync is in progress in this repository", hint="start one with vimesync sync")
    return state


def _rules(state: SyncState) -> None:
    """ValueError naming a value no type refuses but vimesync never writes."""
    if len({s.name for s in state.steps}) != len(state.steps):
        raise ValueError("steps")
    if state.branch is not None and not carry_state.valid_branch(Path(state.checkout), state.branch):
        raise ValueError("branch")
