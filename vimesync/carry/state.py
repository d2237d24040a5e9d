"""Where a carry stands, kept in the repository's git directory (never in a work tree).

``<git common dir>/vimesync-carry.json`` exists from the moment a carry starts until it ends or is
aborted: a second carry on the same repository (from any of its worktrees) is refused while it
exists, and ``--continue``/``--skip``/``--abort``/``--status`` read it from a new shell. It is
rewritten atomically after each step; the sync branch is the truth about which commits exist (a
process killed between moving the branch and writing this file is reconciled on resume).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.carry.plan import Item
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import loads_json, read_text_input, write_atomic

STATE_NAME = "vimesync-carry.json"
VERSION = 1
MAX_STATE = 16 << 20


@dataclass
class State:
    branch: str
    worktree: str
    downstream: str  # the repository the carry was started from
    upstream: str
    upstream_repo: str | None
    onto: str
    base: str
    tip: str
    squash: bool
    pin: str | None  # the upstream pin's path in the downstream tree
    items: list[Item]
    next: int = 0
    last: str = ""  # the commit the branch is at after the last step
    squash_tree: str | None = None  # --squash: the tree carried so far
    worktree_tree: str | None = None  # the tree the worktree's index and files show (None: no worktree yet)
    pre_conflict_tree: str | None = None  # what the worktree showed before the conflict was staged
    phase: str = "items"  # "items" | "pin" | "done"
    carried: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    conflict: dict[str, Any] | None = None
    version: int = VERSION

    def to_json(self) -> str:
        doc = asdict(self)
        doc["items"] = [i.to_json() for i in self.items]
        return json.dumps(doc, indent=1)


def common_dir(repo: Path) -> Path:
    out = git.run(repo, ["rev-parse", "--git-common-dir"]).decode().strip()
    return (repo / out).resolve() if not os.path.isabs(out) else Path(out)


def state_path(repo: Path) -> Path:
    return common_dir(repo) / STATE_NAME


def exists(repo: Path) -> bool:
    return os.path.lexists(state_path(repo))


def create(repo: Path, state: State) -> None:
    """Write the first state, refusing when one exists (O_EXCL: two carries cannot both start)."""
    path = state_path(repo)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise in_progress(path) from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(state.to_json())


def in_progress(path: Path) -> BadInput:
    return BadInput(
        f"a carry is already in progress in this repository ({path})",
        hint="vimesync carry --status shows it; --continue, --skip or --abort ends it",
    )


def save(repo: Path, state: State) -> None:
    path = state_path(repo)
    write_atomic(path, state.to_json().encode("utf-8"), root=path.parent, what="carry state")


def remove(repo: Path) -> None:
    try:
        os.unlink(state_path(repo))
    except FileNotFoundError:
        pass


def load(repo: Path) -> State:
    """The carry in progress; BadInput when there is none or the file is not ours."""
    path = state_path(repo)
    if not os.path.lexists(path):
        raise BadInput("no carry is in progress in this repository", hint="start one with vimesync carry")
    text = read_text_input(path, max_bytes=MAX_STATE, root=path.parent)
    doc = loads_json(text, where=str(path))
    try:
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise ValueError("unknown version")
        items = [Item.from_json(i) for i in doc["items"]]
        fields = {k: v for k, v in doc.items() if k != "items"}
        state = State(items=items, **fields)
        for name in ("branch", "worktree", "downstream", "upstream", "onto", "base", "tip", "last", "phase"):
            if not isinstance(getattr(state, name), str):
                raise ValueError(name)
        if not isinstance(state.next, int) or not 0 <= state.next <= len(items):
            raise ValueError("next")
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            str(path),
            f"not a carry state vimesync can read ({exc})",
            hint="vimesync carry --abort removes it",
        ) from None
    return state
