"""``demo`` as text: the sync report's Markdown, what was built and where it is kept (stderr)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.demo.pipeline import DemoOutcome


def render_demo(outcome: DemoOutcome) -> None:
    from vimesync.report.markdown import render_markdown

    output.out(render_markdown(outcome.report).rstrip("\n"))


def demo_notes(outcome: DemoOutcome) -> None:
    """The demo's notes, dim on stderr (they say where things are, they warn of nothing)."""
    for note in outcome.notes:
        output.stderr.print(output.styled((note, "dim")))
