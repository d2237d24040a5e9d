"""A progress bar for long parses: stderr only, and only on a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from vimesync.cli import output


@contextmanager
def parse_progress(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("parsing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=output.stderr,
        transient=True,
    ) as bar:
        task = bar.add_task("parse", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def progress_for(json_out: bool) -> Callable[[], AbstractContextManager[Callable[[int, int], None] | None]]:
    """What a use case's ``progress`` is in this run: a bar on a terminal, never with ``--json``."""
    return lambda: parse_progress(enabled=not json_out and output.progress_enabled())
