"""``patches lint`` and ``patches describe`` as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.app.lint import DescribeOutcome, LintOutcome


def render_lint(outcome: LintOutcome) -> None:
    findings = outcome.found
    for f in findings:
        output.stdout.print(output.styled(f"{f.path}:{f.line}: ", (f.code, "bold red"), f" {f.message}"))
    patches = sum(r.patches for r in outcome.results)
    if findings:
        summary = f"Found {plural(len(findings), 'finding')} in {plural(patches, 'patch', 'patches')}."
        output.stdout.print(output.styled(summary))
    else:
        output.stdout.print(
            output.styled(("All checks passed", "bold green"), f": {plural(patches, 'patch', 'patches')}.")
        )


def render_describe(outcome: DescribeOutcome) -> None:
    verb = "updated the header of" if outcome.changed else "already up to date:"
    output.stderr.print(output.styled(f"{verb} {outcome.patch}"))
    if outcome.changed:  # the report reads the head: until then its Purpose cell says so
        output.stderr.print(output.styled("next: git commit it: the report reads the committed patch"))
