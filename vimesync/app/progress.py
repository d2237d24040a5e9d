"""How a use case says what it is doing and how far, without printing.

The caller hands it a :class:`Progress`: a factory of progress contexts, each named by what it
does ("parsing", "sync 2/6: checking the patch stack") and yielding a ``(done, total)`` callback,
or None for no progress (the CLI's shows them on a terminal's stderr, and nothing on a pipe,
with ``--json`` or in CI). Contexts nest: a step of a sync, the parse inside it. :class:`Phases`
numbers the steps of one long use case, so even a step with nothing to count says how far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

ProgressFn = Callable[[int, int], None]


class Progress(Protocol):
    def __call__(self, what: str = "parsing") -> AbstractContextManager[ProgressFn | None]: ...


@contextmanager
def no_progress(what: str = "parsing") -> Iterator[ProgressFn | None]:
    yield None


class Phases:
    """The steps of one use case, each shown as ``report 2/6: auditing the changed paths``."""

    def __init__(self, progress: Progress, what: str, total: int) -> None:
        self.progress, self.what, self.total, self.done = progress, what, total, 0

    def __call__(self, doing: str) -> AbstractContextManager[ProgressFn | None]:
        self.done = min(self.done + 1, self.total)
        return self.progress(f"{self.what} {self.done}/{self.total}: {doing}")
