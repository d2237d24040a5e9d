"""What the use cases are doing and how far, on stderr: only on a terminal, never with
``--json`` or in CI (no ``\\r`` and no escape bytes in a log).

One live display for the whole command: a nested context (the parse inside a sync's step) is one
more line in it, removed when it ends; nothing is left on the screen after the command.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vimesync.cli import output

if TYPE_CHECKING:
    from rich.progress import Progress as Live
    from rich.progress import Task
    from rich.text import Text

    from vimesync.app.progress import Progress, ProgressFn


class _Shown:
    """The live display, started by the first context and stopped with the last."""

    def __init__(self) -> None:
        self.live: Live | None = None
        self.open = 0

    @contextmanager
    def task(self, what: str) -> Iterator[ProgressFn | None]:
        live = self._start()
        task = live.add_task(what, total=None)
        live.refresh()  # drawn once at least, however soon it ends

        def update(done: int, total: int) -> None:
            live.update(task, completed=done, total=total)
            if total and done >= total:
                live.refresh()  # n/n drawn, however soon the display goes after it

        try:
            yield update
        finally:
            live.remove_task(task)
            self.open -= 1
            if not self.open:
                live.stop()
                self.live = None

    def _start(self) -> Live:
        from rich.progress import (
            BarColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        class Count(ProgressColumn):
            def render(self, task: Task) -> Text:
                text = f"{task.completed:,.0f}/{task.total:,.0f}" if task.total else ""
                return output.styled(text)

        class Bar(BarColumn):  # a step with nothing to count has its spinner and its time only
            def render(self, task: Task) -> Any:
                return super().render(task) if task.total else output.styled("")

        if self.live is None:
            self.live = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                Bar(bar_width=30),
                Count(),
                TimeElapsedColumn(),
                console=output.stderr,
                transient=True,
            )
            self.live.start()
        self.open += 1
        return self.live


_SHOWN = _Shown()


@contextmanager
def _none(what: str = "parsing") -> Iterator[ProgressFn | None]:
    yield None


@contextmanager
def _shown(what: str = "parsing") -> Iterator[ProgressFn | None]:
    with _SHOWN.task(output.styled(what).plain) as update:
        yield update


def progress_for(json_out: bool) -> Progress:
    """What a use case's ``progress`` is in this run: shown on a terminal, never with ``--json``
    or in CI."""
    return _shown if not json_out and output.progress_enabled() else _none
