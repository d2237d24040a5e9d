"""What a check found, in the shape every CI format shares: test cases, annotations, a summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning", "notice"]


@dataclass(frozen=True)
class Case:
    """One test case: passed, failed (``failure`` is the one-line message, ``detail`` the body)
    or skipped (``skipped`` says why)."""

    name: str
    classname: str
    failure: str | None = None
    detail: str = ""
    skipped: str | None = None
    file: str | None = None  # where the case's subject lives, relative to the checkout
    line: int | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Suite:
    name: str
    cases: tuple[Case, ...]

    @property
    def failures(self) -> int:
        return sum(1 for c in self.cases if c.failure is not None)

    @property
    def skipped(self) -> int:
        return sum(1 for c in self.cases if c.failure is None and c.skipped is not None)


@dataclass(frozen=True)
class Annotation:
    """A message GitHub shows on a line of a file (or on the run, without ``file``)."""

    level: Level
    title: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None


@dataclass(frozen=True)
class Findings:
    """Everything one command reports to CI."""

    suites: tuple[Suite, ...]
    annotations: tuple[Annotation, ...] = ()
    summary: str = ""  # Markdown for the job summary (already escaped for Markdown)
