"""Results of parsing a tree's Python files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple


class StatKey(NamedTuple):
    """What ``lstat`` says of a file on disk: with its absolute path, git's index key. An unchanged
    key (and a record older than the cache's write time) means an unchanged content."""

    size: int
    mtime_ns: int
    inode: int


class PyFile(NamedTuple):
    """One file offered to the parser. Its bytes come from ``data``, else ``file`` (read from disk),
    else the loader given to ``parse_tree`` (e.g. a git source's blob stream). ``oid``, when known,
    is the git blob id of the content: the cache key, so a cache hit needs no read at all.
    ``stat``, for a ``file`` in a tree that stays where it is (a user's folder, not a scratch copy),
    is its lstat key when listed: with the cache's record of it, an unchanged file is not read.

    A NamedTuple, as StatKey: a check lists thousands, and a frozen dataclass costs three times as
    much to make."""

    path: str  # relative to the tree root, "/"-separated
    size: int = -1  # bytes, -1 when unknown
    oid: str | None = None
    data: bytes | None = None
    file: str | Path | None = None  # a str is cheaper to make, thousands of times
    stat: StatKey | None = None

    def __repr__(self) -> str:  # never the bytes: a failing test would print megabytes
        held = f", data=<{len(self.data)} bytes>" if self.data is not None else ""
        return f"PyFile({self.path!r}, size={self.size}, oid={self.oid!r}{held}, file={self.file!r})"


@dataclass(frozen=True)
class ParseFailure:
    path: str  # relative to the tree root, "/"-separated
    line: int | None
    message: str  # "SyntaxError: invalid syntax", "parser crashed (exit code -11)", ...
    column: int | None = None
    # Set by `patches check`: the stack did not change this file (it fails at the pin itself), and
    # the oldest newer grammar ("3.12") that parses it, when an interpreter for one was found.
    untouched: bool = False
    parses_with: str | None = None


@dataclass(frozen=True)
class ConflictMarker:
    path: str
    line: int
    text: str  # the marker line, e.g. "<<<<<<< HEAD"


@dataclass(frozen=True)
class ParseReport:
    files: int  # number of *.py files parsed (cached or not)
    failed: tuple[ParseFailure, ...]
    version: str  # "3.12": the grammar target
    # "--python", "requires-python in pyproject.toml", ".python-version", "running interpreter"
    version_source: str
    interpreter: str  # the interpreter the workers ran, e.g. "/usr/bin/python3.12 (3.12.1)"
    cached: int = 0  # how many results came from the cache
    conflict_markers: tuple[ConflictMarker, ...] = ()
    notes: tuple[str, ...] = ()  # e.g. "cache disabled: ...", "parsed with feature_version=(3, 10)"

    @property
    def ok(self) -> bool:
        """Every file parses and no conflict marker is left."""
        return not self.failed and not self.conflict_markers

    @property
    def at_pin(self) -> tuple[ParseFailure, ...]:
        """Failures of files the stack did not touch: the pinned source fails by itself."""
        return tuple(f for f in self.failed if f.untouched)

    @property
    def by_stack(self) -> tuple[ParseFailure, ...]:
        """Failures of files the stack touched (or whose folder it changed)."""
        return tuple(f for f in self.failed if not f.untouched)

    @property
    def stack_ok(self) -> bool:
        """Nothing the stack did fails: what fails, fails at the pin itself."""
        return not self.by_stack and not self.conflict_markers
