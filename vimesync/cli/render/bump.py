"""``pin bump`` as text: the stack at both pins side by side, notes, what was written, the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from pathlib import Path

    from rich.text import Text

    from vimesync.app.bump import BumpOutcome
    from vimesync.check.bump import BumpReport


def render_bump(outcome: BumpOutcome, *, markdown: bool = False) -> None:
    """The verdict table, or (``markdown``) the pull-request body."""
    if markdown:
        output.stdout.file.write(outcome.markdown())
        output.stdout.file.flush()
        return
    _render(outcome.report, list(outcome.written), outcome.conflicts, outcome.kept)


# Every string below that comes from the source, the series or a patch goes through output.styled.

_STYLE = {
    "applied": "green",
    "offsets": "yellow",
    "already-applied": "magenta",
    "partly-applied": "red",
    "failed": "red",
    "skipped": "dim",
}
_ACTION = {"keep": "kept", "rewrite": "rewritten", "drop": "dropped", "conflict": "CONFLICT"}


def _render(report: BumpReport, written: list[str], conflicts: Path | None, kept: tuple[str, ...]) -> None:
    from rich import box
    from rich.table import Table

    from vimesync.check.bump import label, verdict
    from vimesync.check.model import drift_note

    con = output.stdout
    old, new = label(report.old), label(report.new)
    con.print(output.styled((report.engine, "bold"), f" pin bump: {report.old.kind} {report.old.path}"))
    con.print(output.styled(f"  from {old} to {report.new.kind} {report.new.path}"))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("Patch")
    table.add_column(output.styled(f"at {old}"), overflow="fold")  # a source's name: never markup
    table.add_column(output.styled(f"at {new}"), overflow="fold")
    refreshing = any(p.refresh is not None for p in report.patches)
    if refreshing:
        table.add_column("Refresh", overflow="fold")
    for i, p in enumerate(report.patches, 1):
        row: list[str | Text] = [
            str(i),
            output.styled(p.name),
            output.styled((verdict(p.old), _STYLE[p.old.status])),
            output.styled((verdict(p.new), _STYLE[p.new.status])),
        ]
        if p.refresh is not None:
            style = "red" if p.refresh.action == "conflict" else ""
            row.append(output.styled((f"{_ACTION[p.refresh.action]}: {p.refresh.why}", style)))
        table.add_row(*row)
    con.print(table)
    for p in report.patches:
        if p.new.status == "already-applied":
            con.print(
                output.styled((f"  {p.name}: already applied at {new}: drop it from the series", "magenta"))
            )
        if p.new.upstreamed:
            con.print(output.styled(f"  {p.name}: upstreamed at {p.new.upstreamed}"))
        failing = {f.file for f in p.new.failures} if p.new.status != "already-applied" else set()
        drifted = [d for d in p.new.drift if d.file in failing]
        if len(drifted) == 1:
            con.print(output.styled((f"  {p.name}: note: {drift_note(drifted[0], new)}", "yellow")))
        elif drifted:
            files = f"{len(drifted)} of the files with a failing hunk"
            con.print(
                output.styled(
                    (
                        f"  {p.name}: note: {files} differ from what it was made against (index lines)",
                        "yellow",
                    )
                )
            )
    for side, py in ((old, report.old_python), (new, report.new_python)):
        if py is not None:
            bad = len(py.failed) + len(py.conflict_markers)
            verdict_py = "parse" if not bad else f"parse, {bad} do not"
            cached = f", {py.cached:,} from cache" if py.cached else ""
            con.print(output.styled(f"At {side}: {py.files:,} patched Python files {verdict_py}{cached}."))
    if conflicts is not None:
        con.print(output.styled(f"Merged files with conflict markers are in {conflicts}."))
        for name in kept:
            con.print(output.styled(f"  {name}: its folder was there already (being edited): left as it is"))
        for p in report.conflicts:
            if p.refresh is not None and p.refresh.conflicts:
                con.print(
                    output.styled(
                        f"  edit {conflicts / p.name}, then: "
                        f"vimesync patches refresh {p.name} --from {conflicts}"
                    )
                )
    for path in written:
        con.print(output.styled(f"wrote {path}"))
    need = len(report.conflicts)
    if report.ok:
        con.print(output.styled(("OK", "bold green"), f": the stack is ready for {new}."))
    else:
        what = (
            f"{need} of {len(report.patches)} patches conflict at {new}"
            if need
            else "patched files do not parse"
        )
        con.print(output.styled(("NEEDS WORK", "bold red"), f": {what}."))
