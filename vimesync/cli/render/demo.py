"""``demo`` as text: the sync report's Markdown, what was built and where it is kept (stderr)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.demo.pipeline import DemoOutcome


def render_demo(outcome: DemoOutcome) -> None:
    from vimesync.report.markdown import render_markdown

    output.out(render_markdown(outcome.report).rstrip("\n"))
