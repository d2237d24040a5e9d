"""A resumable state file: one JSON document in a repository's git common dir (never in a work
tree), from the moment a long operation starts until it ends or is aborted.

Created with ``O_EXCL`` (two runs cannot both start), rewritten atomically after each step,
bounded on write and on read (a state vimesync could not read back is never written), and read
back through :func:`vimesync.safefs.decode` into its dataclass: the file sits in ``.git``, which
a checked-out repository's content cannot write, yet a value of the wrong shape is refused with
the way out (``hint``), never trusted. Each state (``carry/state.py``, ``app/syncstate.py``)
keeps only its schema and its own rules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Generic, TypeVar

from vimesync import git
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import (
    CONTROL,
    LIMITS,
    DecodeError,
    DecodeLimits,
    Text,
    decode,
    encode,
    lexical,
    loads_json,
    pseudo_area,
    read_text_input,
    write_atomic,
)

T = TypeVar("T")


def plain_location(path: str) -> bool:
    """An absolute path that lies outside ``/proc``, ``/dev`` and ``/sys`` (by its name and by its
    real place): what a state may name. A state names only locations that came from the job's
    flags or were checked when the run started (``vimesync.repopaths``); read back, each is held
    to the rule every location is held to, whoever wrote the file."""
    if not os.path.isabs(path) or "\0" in path or pseudo_area(lexical(path)) is not None:
        return False
    try:
        return pseudo_area(os.path.realpath(path)) is None
    except (OSError, ValueError):  # a link it may not read: nothing vimesync wrote
        return False


# A location a state names (a checkout, a worktree, a repository, an output): one type for both.
Location = Annotated[
    str,
    Text(
        max=4096, forbid=CONTROL, check=plain_location, what="an absolute path outside /proc, /dev and /sys"
    ),
]


@dataclass(frozen=True)
class StateFile(Generic[T]):
    """One state file: where it is, its dataclass, its cap, and the words of its errors."""

    path: Path
    schema: type[T]
    max_bytes: int
    what: str  # "carry state": "not a carry state vimesync can read"
    hint: str  # the way out of a state that cannot be read ("vimesync carry --abort removes it")
    too_large: Callable[[T, int], BadInput] | None = None  # the refusal of a state past the cap
    limits: DecodeLimits = LIMITS  # of its strings, lists and nesting (the byte cap comes first)

    @classmethod
    def of(
        cls,
        repo: Path,
        name: str,
        schema: type[T],
        *,
        max_bytes: int,
        what: str,
        hint: str,
        too_large: Callable[[T, int], BadInput] | None = None,
        limits: DecodeLimits = LIMITS,
    ) -> StateFile[T]:
        """The state file ``name`` of ``repo`` (any of its worktrees: the common git dir)."""
        return cls(git.common_dir(repo) / name, schema, max_bytes, what, hint, too_large, limits)

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def encoded(self, state: T) -> bytes:
        """The file's bytes; BadInput when they would pass the cap."""
        data = json.dumps(encode(state), indent=1).encode("utf-8")
        if len(data) > self.max_bytes:
            if self.too_large is not None:
                raise self.too_large(state, len(data))
            raise BadInput(f"this {self.what} would take {len(data):,} bytes, past {self.max_bytes:,}")
        return data

    def create(self, state: T, busy: BadInput) -> None:
        """Write the first state; ``busy`` when one exists (``O_EXCL``: two cannot both start)."""
        data = self.encoded(state)  # refused up front when it would pass the cap: nothing made yet
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except FileExistsError:
            raise busy from None
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def save(self, state: T) -> None:
        write_atomic(self.path, self.encoded(state), root=self.path.parent, what=self.what)

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def read(self, rules: Callable[[T], None] | None = None) -> T | None:
        """The state (None when there is none), decoded, then ``rules`` (a ValueError naming the
        key it refuses); ConfigError naming the file when it is not one vimesync wrote."""
        if not self.exists():
            return None
        text = read_text_input(self.path, max_bytes=self.max_bytes, root=self.path.parent)
        doc = loads_json(text, where=str(self.path))
        try:
            state = decode(self.schema, doc, where=str(self.path), limits=self.limits)
            if rules is not None:
                rules(state)
        except DecodeError as exc:
            raise self.unreadable(exc.detail) from None
        except ValueError as exc:
            raise self.unreadable(str(exc)) from None
        return state

    def unreadable(self, why: str) -> ConfigError:
        return ConfigError(str(self.path), f"not a {self.what} vimesync can read ({why})", hint=self.hint)
