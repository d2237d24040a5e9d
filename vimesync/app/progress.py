"""How a use case reports the progress of a long parse without printing: the caller hands it a
factory of progress contexts (the CLI's is a bar on stderr); each yields a ``(done, total)``
callback, or None for no progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

ProgressFn = Callable[[int, int], None]
Progress = Callable[[], AbstractContextManager[ProgressFn | None]]


@contextmanager
def no_progress() -> Iterator[ProgressFn | None]:
    yield None
