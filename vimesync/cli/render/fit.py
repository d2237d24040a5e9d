"""Tables that keep names whole: patch and release names are never cut or folded to fit.

rich shrinks the widest columns of a table that is too wide for the console and cuts or folds
whatever no longer fits, names included ("sglang.pa…", a release over two lines). :func:`fit`
decides every column's width instead: the columns named ``whole`` (and every header) get their
full width, the others share what is left and wrap; when even that cannot fit, it says so and
the renderer lists the same facts one per line.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.measure import Measurement
    from rich.segment import Segment
    from rich.table import Table
    from rich.text import Text

_UNBOUNDED = 100_000
_FEW = 12  # columns: "offsets ±12", "conflicts:"


def fit(table: Table, console: Console, *, whole: Collection[int]) -> bool:
    """Set the width of each column of ``table`` so that it fits ``console`` with the columns
    ``whole`` (their indexes) and every header unbroken: True, or False when it cannot fit."""
    wide = console.options.update_width(_UNBOUNDED)
    # rich's own measure of a column (its cells and header, padding included); private, but
    # the only way to know the padding rich will add (rich>=13 has it).
    ranges = [table._measure_column(console, wide, c) for c in table.columns]
    pads = [table._get_padding_width(i) for i in range(len(table.columns))]
    heads = [_measure(c.header, console).minimum + p for c, p in zip(table.columns, pads, strict=True)]
    most = [r.maximum for r in ranges]
    # Any other column: its header's longest word (a release name), at least a few words wide.
    least = [most[i] if i in whole else max(heads[i], min(most[i], _FEW + pads[i])) for i in range(len(most))]
    room = console.width - table._extra_width
    if sum(most) <= room:
        return True
    if sum(least) > room:
        return False
    # Headers on one line when there is room for that, then the rest to the widest content.
    heads_whole = [
        max(w, _measure(c.header, console).maximum + p)
        for w, c, p in zip(least, table.columns, pads, strict=True)
    ]
    widths = heads_whole if sum(heads_whole) <= room else list(least)
    for _ in range(room - sum(widths)):  # one column at a time: the one furthest from its need
        i = max(range(len(widths)), key=lambda k: most[k] - widths[k])
        widths[i] += 1
    for column, width, pad in zip(table.columns, widths, pads, strict=True):
        column.width = width - pad
        if column._index not in whole:
            column.overflow = "fold"  # a word longer than the column: folded, never lost
    return True


def _measure(renderable: object, console: Console) -> Measurement:
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(_UNBOUNDED), renderable)  # type: ignore[arg-type]


def indented(lines: list[Text], *, by: int = 7) -> Table:
    """Lines under a heading, each wrapped between words to the console's width (a release name
    is one word: never split) and indented ``by`` columns on every line it takes."""
    from rich.table import Table

    grid = Table.grid()
    grid.add_column(width=by, no_wrap=True)
    grid.add_column(overflow="fold")  # a word longer than the line: folded, never lost
    for line in lines:
        grid.add_row("", line)
    return grid


def print_indented(console: Console, lines: list[Text], *, by: int = 7) -> None:
    """:func:`indented` printed line by line, each without the spaces that pad it to the width of
    the longest: a line ends with its last word (piped, no trailing padding in a log)."""
    from rich.segment import Segment, Segments

    for line in console.render_lines(indented(lines, by=by), console.options, pad=False):
        console.print(Segments([*_rstrip(line), Segment.line()]))


def _rstrip(line: list[Segment]) -> list[Segment]:
    from rich.segment import Segment

    out = list(line)
    while out and not out[-1].control:
        last = out[-1]
        text = last.text.rstrip(" ")
        if text:
            out[-1] = Segment(text, last.style)
            break
        out.pop()
    return out
