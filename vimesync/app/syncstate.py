"""Where ``vimesync sync`` stands, kept in the repository's git directory (never in a work tree).

``<git common dir>/vimesync-sync.json`` exists from the moment a sync starts until ``--abort``
removes it; a finished sync keeps it (``finished``), so the next ``sync`` can say "up to date".
It is created with O_EXCL (two syncs cannot both start), rewritten atomically after each step,
bounded, and shape-checked on read: a value vimesync never writes is refused, and the paths it
names are used only after git agrees (the worktree must be the one with the sync branch checked
out; see :func:`vimesync.app.sync`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vimesync.carry import state as carry_state
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import loads_json, read_text_input, write_atomic

STATE_NAME = "vimesync-sync.json"
VERSION = 1
MAX_STATE = 256 << 10  # a sync's state is a few hundred bytes: anything past this is not ours
MAX_FIGURE = 500  # characters of a step's figure the state keeps
STEPS = ("walk", "carry", "patches", "audit", "status", "report")

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class StepRecord:
    """One finished step: its figure, and the head it judged (None: a step not about the head)."""

    name: str
    ok: bool
    exit_code: int
    figure: str
    head: str | None = None


@dataclass
class SyncState:
    checkout: str  # the repository the sync was started from (its main worktree)
    onto: str  # the downstream commit the sync branch starts from
    baseline: str  # the pre-sync commit the audit compares against (--baseline, else onto)
    branch: str | None = None  # the sync branch (known once the walk named the tip)
    worktree: str | None = None  # its linked worktree (known once the carry made it)
    carry_started: bool = False
    steps: list[StepRecord] = field(default_factory=list)
    finished: bool = False
    # What the flags said when it started: --continue takes them again unless given anew.
    skip_gate: list[str] = field(default_factory=list)
    publish: str | None = None
    output: str | None = None
    version: int = VERSION

    def done(self, name: str) -> StepRecord | None:
        return next((s for s in self.steps if s.name == name), None)

    def record(self, step: StepRecord) -> None:
        step.figure = step.figure if len(step.figure) <= MAX_FIGURE else step.figure[: MAX_FIGURE - 1] + "…"
        self.steps = [s for s in self.steps if s.name != step.name] + [step]
        self.steps.sort(key=lambda s: STEPS.index(s.name))

    def forget(self, *names: str) -> None:
        self.steps = [s for s in self.steps if s.name not in names]

    def encoded(self) -> bytes:
        data = json.dumps(asdict(self), indent=1).encode("utf-8")
        if len(data) > MAX_STATE:  # pragma: no cover - every field is capped
            raise BadInput(f"this sync's state would take {len(data):,} bytes, past {MAX_STATE:,}")
        return data


def state_path(repo: Path) -> Path:
    return carry_state.common_dir(repo) / STATE_NAME


def exists(repo: Path) -> bool:
    return os.path.lexists(state_path(repo))


def create(repo: Path, state: SyncState) -> None:
    """Write the first state, refusing when one exists (O_EXCL: two syncs cannot both start)."""
    path = state_path(repo)
    data = state.encoded()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise BadInput(
            f"a sync is already in progress in this repository ({path})",
            hint="vimesync sync --status shows it; --continue goes on, --abort drops it",
        ) from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def save(repo: Path, state: SyncState) -> None:
    path = state_path(repo)
    write_atomic(path, state.encoded(), root=path.parent, what="sync state")


def remove(repo: Path) -> None:
    try:
        os.unlink(state_path(repo))
    except FileNotFoundError:
        pass


def load(repo: Path) -> SyncState:
    """The sync recorded here; BadInput when there is none, ConfigError when it is not ours."""
    path = state_path(repo)
    if not os.path.lexists(path):
        raise BadInput("no sync is in progress in this repository", hint="start one with vimesync sync")
    doc = loads_json(read_text_input(path, max_bytes=MAX_STATE, root=path.parent), where=str(path))
    try:
        return _parse(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            str(path), f"not a sync state vimesync can read ({exc})", hint="vimesync sync --abort removes it"
        ) from None


def _parse(doc: Any) -> SyncState:
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError("unknown version")
    raw_steps = doc.get("steps")
    if not isinstance(raw_steps, list) or len(raw_steps) > len(STEPS):
        raise ValueError("steps")
    steps = [_step(s) for s in raw_steps]
    if len({s.name for s in steps}) != len(steps):
        raise ValueError("steps")
    fields = {k: v for k, v in doc.items() if k != "steps"}
    state = SyncState(steps=steps, **fields)
    if not _path(state.checkout):
        raise ValueError("checkout")
    for name in ("onto", "baseline"):
        if not isinstance(getattr(state, name), str) or not _OID.fullmatch(getattr(state, name)):
            raise ValueError(name)
    if state.branch is not None and not carry_state.valid_branch(Path(state.checkout), state.branch):
        raise ValueError("branch")
    if state.worktree is not None and not _path(state.worktree):
        raise ValueError("worktree")
    for name in ("carry_started", "finished"):
        if not isinstance(getattr(state, name), bool):
            raise ValueError(name)
    if not isinstance(state.skip_gate, list) or not all(_short(g) for g in state.skip_gate):
        raise ValueError("skip_gate")
    if len(state.skip_gate) > 20:
        raise ValueError("skip_gate")
    if state.publish is not None and not _short(state.publish):
        raise ValueError("publish")
    if state.output is not None and not _path(state.output):
        raise ValueError("output")
    return state


def _step(doc: Any) -> StepRecord:
    if not isinstance(doc, dict) or set(doc) != {"name", "ok", "exit_code", "figure", "head"}:
        raise ValueError("steps")
    step = StepRecord(**doc)
    if step.name not in STEPS or not isinstance(step.ok, bool):
        raise ValueError("steps")
    if (
        not isinstance(step.exit_code, int)
        or isinstance(step.exit_code, bool)
        or step.exit_code not in (0, 1)
    ):
        raise ValueError("steps")
    if not isinstance(step.figure, str) or len(step.figure) > MAX_FIGURE or _CONTROL.search(step.figure):
        raise ValueError("steps")
    if step.head is not None and not (isinstance(step.head, str) and _OID.fullmatch(step.head)):
        raise ValueError("steps")
    return step


def _path(value: object) -> bool:
    return (
        isinstance(value, str) and os.path.isabs(value) and len(value) < 4096 and not _CONTROL.search(value)
    )


def _short(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) < 300 and not _CONTROL.search(value)
