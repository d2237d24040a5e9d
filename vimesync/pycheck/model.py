"""Results of parsing a tree's Python files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PyFile:
    """One file offered to the parser. Its bytes come from ``data``, else ``file`` (read from disk),
    else the loader given to ``parse_tree`` (e.g. a git source's blob stream). ``oid``, when known,
    is the git blob id of the content: the cache key, so a cache hit needs no read at all."""

    path: str  # relative to the tree root, "/"-separated
    size: int = -1  # bytes, -1 when unknown
    oid: str | None = None
    data: bytes | None = field(default=None, repr=False)
    file: Path | None = None


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
        return not self.failed and not self.conflict_markers
