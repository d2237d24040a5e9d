"""Results of parsing a tree's Python files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ParseFailure:
    path: str  # relative to the tree root, "/"-separated
    line: int | None
    message: str


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
    version_source: str  # "--python", "requires-python in pyproject.toml", ".python-version", "running interpreter"
    interpreter: str  # the interpreter the workers ran, e.g. "/usr/bin/python3.12 (3.12.1)"
    cached: int = 0  # how many results came from the cache
    conflict_markers: tuple[ConflictMarker, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failed and not self.conflict_markers
