"""What ``vimesync sync`` is asked and what it answers: its modes, its request, the steps it ran
and its results (``--status``, ``--abort``), each with its JSON document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from vimesync.app import syncstate
from vimesync.app.carry import AbortResult
from vimesync.app.flags import CiFlags, EngineFlags, OutputFlags
from vimesync.app.result import Kind, document
from vimesync.app.syncstate import SyncState
from vimesync.app.workspace import Workspace
from vimesync.carry.run import CarryOptions
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK
from vimesync.outputs.model import Case, Findings, Suite

REPORT_DEFAULT = Path(".vimesync") / "sync-report.md"  # at the checkout's root (keep .vimesync/ ignored)
HEAD_STEPS = ("patches", "audit", "status", "report")  # judged at the head: redone when it moved


class SyncMode(str, Enum):
    START = "start"
    CONTINUE = "--continue"
    STATUS = "--status"
    ABORT = "--abort"


@dataclass(frozen=True)
class SyncRunRequest:
    """What sync's own flags say: the mode, the carry's options (--pr, --direct, --squash, --onto,
    --branch, --worktree), where the engine source is (--source, as the job fetched it), where
    CI is read and the gates switched off (--ci-repo, --skip-gate), and where the report goes
    (--publish, --output). The range, baseline and repositories are the workspace's."""

    mode: SyncMode = SyncMode.START
    carry: CarryOptions = field(default_factory=CarryOptions)
    engine: EngineFlags = field(default_factory=EngineFlags)  # --source of the pinned engine (CI)
    ci: CiFlags = field(default_factory=CiFlags)
    output: OutputFlags = field(default_factory=OutputFlags)

    def started_with(self, ws: Workspace) -> list[str]:
        """The flags that only a new sync takes (--continue goes on with its own)."""
        sync = (
            ("--range", ws.flags.range_),
            ("--baseline", ws.flags.baseline),
            ("--upstream", ws.flags.upstream),
        )
        given = self.carry.given() + [flag for flag, value in sync if value]
        order = ["--range", "--pr", "--direct", "--squash", "--onto", "--branch", "--worktree", "--baseline"]
        return sorted(given, key=lambda f: order.index(f) if f in order else len(order))


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
    """``--abort``: the state removed, the carry in progress aborted, or what the finished carry
    made: removed (``branch``, ``worktree``), or kept (why, and the commands that remove it)."""

    removed: bool
    carry: AbortResult | None = None
    branch: str | None = None  # the sync branch it removed
    worktree: str | None = None  # and its worktree
    kept: str | None = None  # what it kept, and why
    remove: str | None = None  # the shell commands that remove what it kept
    kind: Kind = Kind.SYNC
    exit_code: int = EXIT_OK
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        body = {
            "aborted": True,
            "removed": self.removed,
            "carry": self.carry.to_json() if self.carry else None,
            "branch": self.branch,
            "worktree": self.worktree,
            "kept": self.kept,
            "remove": self.remove,
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())


OnStep = Callable[[Step], None]
