"""How ``vimesync report`` shows its result: Markdown (or JSON) to stdout, or to ``--output``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags
    from vimesync.app.report import ReportResult
    from vimesync.report.publish import PublishResult


def show_report(result: ReportResult, out: OutputFlags) -> None:
    """The report in its format, on stdout or in ``--output`` (then one line on stderr says so)."""
    from vimesync.app.report import write_output
    from vimesync.report.markdown import render_markdown

    _next_steps(result)
    if not out.as_json and out.publish is None:
        # The PR's title is not part of its body: said here for the one who opens the PR by hand
        # (--publish sets it; the JSON holds it as "title").
        output.stderr.print(output.styled(("title", "bold"), f": {result.report.title}"))
    if out.output is not None:
        text = (
            json.dumps(result.to_json(), indent=2) + "\n" if out.as_json else render_markdown(result.report)
        )
        write_output(out.output, text)
        output.stderr.print(output.styled(f"wrote {out.output}"))
        return
    output.stdout.file.write(render_markdown(result.report))
    output.stdout.file.flush()


def render_published(done: PublishResult) -> None:
    """One line on stderr: the PR whose description ``--publish`` updated (or found up to date)."""
    verb = "updated" if done.changed else "already up to date:"
    titled = f" (title: {done.title})" if done.title else ""
    output.stderr.print(output.styled(f"{verb} {done.url or done.target}{titled}"))


def _next_steps(result: ReportResult) -> None:
    """What moves each unmet gate, for the maintainer on stderr: never in the PR body."""
    for g in result.report.gates:
        if g.command and not g.ok:
            output.stderr.print(output.styled(("next", "bold"), f" ({g.name}): {g.command}"))
