"""``pin bump`` as text: the stack at both pins side by side, notes, what was written, the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.render.fit import fit, print_indented
from vimesync.text import agree, of_total

if TYPE_CHECKING:
    from pathlib import Path

    from rich.table import Table
    from rich.text import Text

    from vimesync.app.bump import BumpOutcome
    from vimesync.check.bump import BumpReport, PatchBump


def render_bump(outcome: BumpOutcome, *, markdown: bool = False) -> None:
    """The verdict table, or (``markdown``) the pull-request body."""
    if markdown:
        output.stdout.file.write(outcome.markdown())
        output.stdout.file.flush()
        return
    _render(outcome)


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


def _render(outcome: BumpOutcome) -> None:
    from vimesync.check.bump import label, named_apart

    con, report, to_rev = output.stdout, outcome.report, outcome.to_rev
    written, conflicts, kept = outcome.written, outcome.conflicts, outcome.kept
    old, new = label(report.old), label(report.new)
    # The target as --to named it (a tag) beside the commit it resolved to: v0.32.0 (1a2b3c4d5e6f).
    named = f"{to_rev} ({new})" if named_apart(to_rev, new) else new
    con.print(output.styled((report.engine, "bold"), f" pin bump: {report.old.kind} {report.old.path}"))
    pin = (" (the current pin)", "bold") if outcome.to_pinned else ""
    con.print(output.styled(f"  from {old} to {named}: {report.new.kind} {report.new.path}", pin))
    at = to_rev if to_rev is not None and named_apart(to_rev, new) else new  # the tag as given
    table = _table(report, old, at)
    if fit(table, con, whole=(0, 1)):
        con.print(table)
    else:
        _listed(report, old, at)
    for p in report.patches:
        _notes(p, new)
    for side, py, words in (
        (old, report.old_python, report.parsed(new=False)),
        (new, report.new_python, report.parsed(new=True)),
    ):
        if py is not None and words is not None:
            cached = f", {py.cached:,} from cache" if py.cached and not words.endswith("not checked") else ""
            con.print(output.styled(f"At {side}: {words}{cached}."))
    if conflicts is not None:
        _conflicts(report, conflicts, kept)
    for path in written:
        con.print(output.styled(f"wrote {path}"))
    need = len(report.conflicts)
    if report.ok:
        con.print(output.styled(("OK", "bold green"), f": the stack is ready for {named}."))
    else:
        what = (
            f"{of_total(need, len(report.patches), 'patch', 'patches')}"
            f" {agree(need, 'conflicts', 'conflict')} at {named}"
            if need
            else "patched files do not parse"
        )
        con.print(output.styled(("NEEDS WORK", "bold red"), f": {what}."))


def _table(report: BumpReport, old: str, new: str) -> Table:
    """Each patch at both pins, and what the refresh did with it when one ran."""
    from rich import box
    from rich.table import Table

    from vimesync.check.bump import verdict

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("Patch", no_wrap=True)
    table.add_column(output.styled(f"at {old}"))  # a source's name: never markup
    table.add_column(output.styled(f"at {new}"))
    if any(p.refresh is not None for p in report.patches):
        table.add_column("Refresh")
    for i, p in enumerate(report.patches, 1):
        row: list[str | Text] = [
            str(i),
            output.styled(p.name),
            output.styled((verdict(p.old), _STYLE[p.old.status])),
            output.styled((verdict(p.new), _STYLE[p.new.status])),
        ]
        if p.refresh is not None:
            style = "red" if p.refresh.action == "conflict" else ""
            row.append(output.styled((_refreshed(p), style)))
        table.add_row(*row)
    return table


def _refreshed(p: PatchBump) -> str:
    assert p.refresh is not None
    return f"{_ACTION[p.refresh.action]}: {p.refresh.why}"


def _listed(report: BumpReport, old: str, new: str) -> None:
    """The table for a terminal too narrow for it: each patch, then its verdict at each pin
    (names whole)."""
    from vimesync.check.bump import verdict

    con = output.stdout
    for i, p in enumerate(report.patches, 1):
        con.print(output.styled(f"{i:>3}  ", (p.name, "bold")))
        lines = [
            output.styled(f"at {side}: ", (verdict(result), _STYLE[result.status]))
            for side, result in ((old, p.old), (new, p.new))
        ]
        if p.refresh is not None:
            style = "red" if p.refresh.action == "conflict" else ""
            lines.append(output.styled("refresh: ", (_refreshed(p), style)))
        print_indented(con, lines)


def _notes(p: PatchBump, new: str) -> None:
    """What to know of one patch at the new pin: applied already, upstreamed, its files drifted."""
    from vimesync.check.model import drift_note

    con = output.stdout
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
        note = f"  {p.name}: note: {files} differ from what it was made against (index lines)"
        con.print(output.styled((note, "yellow")))


def _conflicts(report: BumpReport, conflicts: Path, kept: tuple[str, ...]) -> None:
    """Where the merged files with conflict markers are, and the command that takes each back."""
    con = output.stdout
    con.print(output.styled(f"Merged files with conflict markers are in {conflicts}."))
    for name in kept:
        con.print(output.styled(f"  {name}: its folder was there already (being edited): left as it is"))
    for p in report.conflicts:
        if p.refresh is not None and p.refresh.conflicts:
            then = f"vimesync patches refresh {p.name} --from {conflicts}"
            con.print(output.styled(f"  edit {conflicts / p.name}, then: {then}"))
