"""``pin scan`` as text (a patch x release table) or as a GitHub-flavoured Markdown table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.render.fit import fit, print_indented
from vimesync.text import agree, of_total, plural

if TYPE_CHECKING:
    from rich.text import Text

    from vimesync.app.scan import ScanOutcome
    from vimesync.check.scan import ScanReport

_STYLE = {
    "applied": "green",
    "offsets": "yellow",
    "already-applied": "magenta",
    "partly-applied": "red",
    "failed": "red",
    "skipped": "dim",
    "missing": "dim",
}


def render_scan(outcome: ScanOutcome, *, markdown: bool = False) -> None:
    report = outcome.report
    if markdown:
        from vimesync.report.matrix import scan_markdown

        output.stdout.file.write(scan_markdown(report))
        output.stdout.file.flush()
        return
    from rich import box
    from rich.table import Table

    con = output.stdout
    con.print(
        output.styled(
            (report.engine or "engine", "bold"),
            f" pin scan: {plural(len(report.patches), 'patch', 'patches')}"
            f" at {plural(len(report.releases), 'release')}",
        )
    )
    for r in report.releases:
        where = f"{r.kind} {r.path}" + (f" at {r.rev}" if r.rev else "")
        pin = (" (the current pin)", "bold") if r.pinned else ""
        con.print(output.styled(f"  {r.label}: ", (where, "dim"), pin))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("Patch", no_wrap=True)
    for r in report.releases:
        table.add_column(output.styled(r.label))  # a source's name: never markup
    for i, patch in enumerate(report.patches, 1):
        row: list[str | Text] = [str(i), output.styled(patch)]
        for r in report.releases:
            c = report.cell(patch, r.label)
            row.append(output.styled((c.short or c.verdict, _STYLE[c.status])))
        table.add_row(*row)
    if fit(table, con, whole=(0, 1)):
        con.print(table)
    else:
        _listed(report)
    for r in report.releases:
        if r.python_ok is False:
            con.print(output.styled((f"At {r.label}: patched Python files do not parse.", "red")))
    if outcome.svg is not None:
        con.print(output.styled(f"wrote {outcome.svg}"))
    bad = [c for c in report.cells if c.status in ("failed", "partly-applied")]
    if report.ok:
        con.print(output.styled(("OK", "bold green"), ": every patch applies at every release."))
    else:
        releases = len({c.release for c in bad})
        con.print(
            output.styled(
                ("NEEDS WORK", "bold red"),
                f": {plural(len(bad), 'cell')} {agree(len(bad), 'conflicts', 'conflict')},"
                f" at {of_total(releases, len(report.releases), 'release')}.",
            )
        )


def _listed(report: ScanReport) -> None:
    """The matrix for a terminal too narrow for it: each patch, then its verdicts, each with the
    releases it holds at (names whole, one verdict a line)."""
    con = output.stdout
    for i, patch in enumerate(report.patches, 1):
        con.print(output.styled(f"{i:>3}  ", (patch, "bold")))
        verdicts: dict[tuple[str, str], list[str]] = {}
        for r in report.releases:
            c = report.cell(patch, r.label)
            verdicts.setdefault((c.short or c.verdict, c.status), []).append(r.label)
        lines = []
        for (words, status), labels in verdicts.items():
            where = "every release" if len(labels) == len(report.releases) > 1 else ", ".join(labels)
            lines.append(output.styled((words, _STYLE[status]), f" at {where}"))
        print_indented(con, lines)
