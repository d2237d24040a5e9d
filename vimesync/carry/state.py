"""Where a carry stands, kept in the repository's git directory (never in a work tree).

``<git common dir>/vimesync-carry.json`` exists from the moment a carry starts until it ends or is
aborted: a second carry on the same repository (from any of its worktrees) is refused while it
exists, and ``--continue``/``--skip``/``--abort``/``--status`` read it from a new shell. It is
rewritten atomically after each step (:class:`vimesync.statefile.StateFile`); the sync branch is
the truth about which commits exist (a process killed between moving the branch and writing this
file is reconciled on resume). Here: its schema (:class:`State`, read by its field types) and
the rules no type says (a branch git accepts, absolute paths, ``next`` within the items).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from vimesync import git
from vimesync.carry.model import (
    Carried,
    CarryConflict,
    CarryPhase,
    CarryRun,
    CarryStatus,
    Item,
    Oid,
    SkippedItem,
)
from vimesync.errors import BadInput
from vimesync.safefs import CONTROL, DecodeLimits, Text
from vimesync.statefile import Location, StateFile
from vimesync.upstream.translate import transform_from_doc

STATE_NAME = "vimesync-carry.json"
VERSION = 1
MAX_STATE = 16 << 20  # read and written: a state past it is never written
MAX_TITLE = 500  # characters of a title the state keeps (a carried subject keeps as many)
MAX_PATHS = 100  # paths of a carried entry the state (and so the result) keeps
HINT = "vimesync carry --abort removes it"

# Paths a value of the state names (they reach git's command lines and name what --abort
# removes): absolute, one line.
AbsolutePath = Location
# The pin's path in the downstream tree and the upstream repository's name: written into commits.
PinPath = Annotated[str, Text(max=4096, forbid=r"[\x00-\x1f]", check=lambda p: not p.startswith("/"))]
RepoName = Annotated[str, Text(max=999, forbid=CONTROL, what="an owner/name")]


@dataclass
class State:
    # branch and worktree come first: --abort finds them in the head of a state it cannot read
    branch: Annotated[str, Text(max=255, forbid=CONTROL, what="a branch name")]
    worktree: AbsolutePath
    downstream: AbsolutePath  # the repository the carry was started from
    upstream: AbsolutePath
    upstream_repo: RepoName | None
    onto: Oid
    base: Oid
    tip: Oid
    squash: bool
    pin: PinPath | None  # the upstream pin's path in the downstream tree
    items: list[Item]
    next: int = 0
    last: Oid = ""  # the commit the branch is at after the last step
    squash_tree: Oid | None = None  # --squash: the tree carried so far
    worktree_tree: Oid | None = None  # the tree the worktree's index and files show (None: no worktree yet)
    pre_conflict_tree: Oid | None = None  # what the worktree showed before the conflict was staged
    phase: CarryPhase = CarryPhase.ITEMS
    carried: list[Carried] = field(default_factory=list)
    skipped: list[SkippedItem] = field(default_factory=list)
    conflict: CarryConflict | None = None
    transform: dict[str, Any] | None = None  # the map and translations the carry started with
    synced: Oid | None = None  # what the pin's synced moves to (None: tip; less with --pr)
    version: Literal[1] = 1

    def result(self, status: CarryStatus) -> CarryRun:
        """What the carry this state describes reports, with ``status``."""
        return CarryRun(
            status=status,
            base=self.base,
            tip=self.tip,
            branch=self.branch,
            worktree=self.worktree,
            carried=list(self.carried),
            skipped=list(self.skipped),
            conflict=self.conflict,
        )


def kept_title(title: str) -> str:
    """A title as the state keeps it: :data:`MAX_TITLE` characters at most."""
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "\u2026"


def kept_paths(paths: list[str]) -> list[str]:
    """A carried entry's paths as the state keeps them: the first :data:`MAX_PATHS`."""
    return paths[:MAX_PATHS]


def _too_large(state: State, size: int) -> BadInput:
    return BadInput(
        f"this carry's state would take {size:,} bytes, past the {MAX_STATE:,} a carry"
        f" keeps ({len(state.items)} items)",
        hint="carry the range in parts (--range BASE..MID, then the rest) or pick PRs with --pr",
    )


def state_file(repo: Path) -> StateFile[State]:
    """The carry's state file of ``repo`` (any of its worktrees)."""
    return StateFile.of(
        repo,
        STATE_NAME,
        State,
        max_bytes=MAX_STATE,
        what="carry state",
        hint=HINT,
        too_large=_too_large,
        limits=DecodeLimits(text=1 << 20, items=1 << 20),  # the file's cap bounds them first
    )


def state_path(repo: Path) -> Path:
    return state_file(repo).path


def exists(repo: Path) -> bool:
    return state_file(repo).exists()


def create(repo: Path, state: State) -> None:
    """Write the first state, refusing when one exists (O_EXCL: two carries cannot both start)."""
    file = state_file(repo)
    file.create(state, in_progress(file.path))


def in_progress(path: Path) -> BadInput:
    return BadInput(
        f"a carry is already in progress in this repository ({path})",
        hint="vimesync carry --status shows it; --continue, --skip or --abort ends it",
    )


def save(repo: Path, state: State) -> None:
    state_file(repo).save(state)


def remove(repo: Path) -> None:
    state_file(repo).remove()


def load(repo: Path) -> State:
    """The carry in progress; BadInput when there is none or the file is not ours."""
    file = state_file(repo)
    state = file.read(lambda s: _rules(repo, s))
    if state is None:
        raise BadInput("no carry is in progress in this repository", hint="start one with vimesync carry")
    if state.transform is not None:
        transform_from_doc(state.transform, where=str(file.path))  # ConfigError when not one
    return state


def valid_branch(repo: Path, name: object) -> bool:
    """``name`` is a branch name vimesync would have made (git's own rules; never an option)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= 255
        and not name.startswith("-")
        and git.run_ok(repo, ["check-ref-format", "--branch", name])
        and not any(ord(c) < 0x20 or c == "\x7f" for c in name)
    )


def _rules(repo: Path, state: State) -> None:
    """ValueError naming a value no type refuses but vimesync never writes: the branch reaches
    git's command lines and names what --abort removes; ``next`` indexes the items."""
    if not valid_branch(repo, state.branch):
        raise ValueError("branch")
    if not 0 <= state.next <= len(state.items):
        raise ValueError("next")
    if not state.last:
        raise ValueError("last")
