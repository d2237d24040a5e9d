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
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.carry.plan import Item
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import loads_json, read_text_input, write_atomic
from vimesync.upstream.translate import transform_from_doc

STATE_NAME = "vimesync-carry.json"
VERSION = 1
MAX_STATE = 16 << 20  # read and written: a state past it is never written
MAX_TITLE = 500  # characters of a title the state keeps (a carried subject keeps as many)
MAX_PATHS = 100  # paths of a carried entry the state (and so the result) keeps


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
    transform: dict[str, Any] | None = None  # the map and translations the carry started with
    synced: str | None = None  # what the pin's synced moves to (None: tip; less with --pr)
    version: int = VERSION

    def to_json(self) -> str:
        # branch and worktree come first: --abort finds them in the head of a state it cannot read
        doc = asdict(self)
        doc["items"] = [i.to_json() for i in self.items]
        return json.dumps(doc, indent=1)

    def encoded(self) -> bytes:
        """The state file's bytes; BadInput when they would pass :data:`MAX_STATE` (a state
        vimesync could not read back is never written)."""
        data = self.to_json().encode("utf-8")
        if len(data) > MAX_STATE:
            raise BadInput(
                f"this carry's state would take {len(data):,} bytes, past the {MAX_STATE:,} a carry"
                f" keeps ({len(self.items)} items)",
                hint="carry the range in parts (--range BASE..MID, then the rest) or pick PRs with --pr",
            )
        return data


def kept_title(title: str) -> str:
    """A title as the state keeps it: :data:`MAX_TITLE` characters at most."""
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "\u2026"


def kept_paths(paths: list[str]) -> list[str]:
    """A carried entry's paths as the state keeps them: the first :data:`MAX_PATHS`."""
    return paths[:MAX_PATHS]


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
    data = state.encoded()  # refused up front when it would pass the cap: nothing made yet
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise in_progress(path) from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def in_progress(path: Path) -> BadInput:
    return BadInput(
        f"a carry is already in progress in this repository ({path})",
        hint="vimesync carry --status shows it; --continue, --skip or --abort ends it",
    )


def save(repo: Path, state: State) -> None:
    path = state_path(repo)
    write_atomic(path, state.encoded(), root=path.parent, what="carry state")


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
        _check_shape(doc)
        items = [Item.from_json(i) for i in doc["items"]]
        fields = {k: v for k, v in doc.items() if k != "items"}
        state = State(items=items, **fields)
        for name in ("branch", "worktree", "downstream", "upstream", "onto", "base", "tip", "last", "phase"):
            if not isinstance(getattr(state, name), str):
                raise ValueError(name)
        if not _is_int(state.next) or not 0 <= state.next <= len(items):
            raise ValueError("next")
        _check_values(repo, state)
        if state.transform is not None:
            transform_from_doc(state.transform, where=str(path))  # ConfigError when not one
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            str(path),
            f"not a carry state vimesync can read ({exc})",
            hint="vimesync carry --abort removes it",
        ) from None
    return state


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_PHASES = ("items", "pin", "done")


def valid_branch(repo: Path, name: object) -> bool:
    """``name`` is a branch name vimesync would have made (git's own rules; never an option)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= 255
        and not name.startswith("-")
        and git.run_ok(repo, ["check-ref-format", "--branch", name])
        and not any(ord(c) < 0x20 or c == "\x7f" for c in name)
    )


def _check_values(repo: Path, state: State) -> None:
    """ValueError for a value vimesync never writes: they reach git's command lines and
    fast-import's stream (a newline there would be a command), and name what --abort removes."""
    if not valid_branch(repo, state.branch):
        raise ValueError("branch")
    for name in ("onto", "base", "tip", "last"):
        if not _OID.fullmatch(getattr(state, name)):
            raise ValueError(name)
    for name in ("squash_tree", "worktree_tree", "pre_conflict_tree", "synced"):
        value = getattr(state, name)
        if value is not None and not (isinstance(value, str) and _OID.fullmatch(value)):
            raise ValueError(name)
    if state.phase not in _PHASES:
        raise ValueError("phase")
    for name in ("worktree", "downstream", "upstream"):
        value = getattr(state, name)
        if not os.path.isabs(value) or any(ord(c) < 0x20 or c == "\x7f" for c in value):
            raise ValueError(name)
    if state.pin is not None and (
        not isinstance(state.pin, str) or any(ord(c) < 0x20 for c in state.pin) or state.pin.startswith("/")
    ):
        raise ValueError("pin")
    if not isinstance(state.squash, bool):
        raise ValueError("squash")
    if state.transform is not None and not isinstance(state.transform, dict):
        raise ValueError("transform")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_pr(value: object) -> bool:
    return value is None or (_is_int(value) and 0 < value < 10**9)  # type: ignore[operator]


def _strs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _entry(doc: object, strings: tuple[str, ...], what: str) -> dict[str, Any]:
    """``doc`` as an entry of the state: a dict with a PR (or None) and these string fields."""
    if not isinstance(doc, dict) or not _is_pr(doc.get("pr")):
        raise ValueError(what)
    if not all(isinstance(doc.get(k), str) for k in strings):
        raise ValueError(what)
    return doc


def _check_shape(doc: dict[str, Any]) -> None:
    """ValueError unless every list and entry of the state has the shape vimesync writes (the
    scalar fields are checked by :func:`_check_values`)."""
    if not isinstance(doc.get("items"), list):
        raise ValueError("items")
    for item in doc["items"]:
        _entry(item, ("title", "kind", "upstream_commit"), "items")
        if not _strs(item.get("steps")) or not all(_OID.fullmatch(s) for s in item["steps"]):
            raise ValueError("items")
        if not _OID.fullmatch(item["upstream_commit"]):
            raise ValueError("items")
        excluded = item.get("excluded", [])
        if not isinstance(excluded, list) or not all(_strs(e) and len(e) == 2 for e in excluded):
            raise ValueError("items")
    for name in ("carried", "skipped"):
        if not isinstance(doc.get(name, []), list):
            raise ValueError(name)
    for c in doc.get("carried", []):
        _entry(c, ("title", "upstream_commit"), "carried")
        commit = c.get("commit")
        if not _strs(c.get("paths")) or not (
            commit is None or (isinstance(commit, str) and _OID.fullmatch(commit))
        ):
            raise ValueError("carried")
    for s in doc.get("skipped", []):
        _entry(s, ("title", "reason", "upstream_commit"), "skipped")
    conflict = doc.get("conflict")
    if conflict is not None:
        _entry(conflict, ("title", "upstream_commit"), "conflict")
        files = conflict.get("files")
        if not isinstance(files, list):
            raise ValueError("conflict")
        for f in files:
            if not isinstance(f, dict) or not all(isinstance(f.get(k), str) for k in ("path", "why")):
                raise ValueError("conflict")
            if not _strs(f.get("hunks")):
                raise ValueError("conflict")
    repo = doc.get("upstream_repo")
    if repo is not None and not (isinstance(repo, str) and not _CONTROL.search(repo) and len(repo) < 1000):
        raise ValueError("upstream_repo")  # it is written into commit messages (trailers)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
