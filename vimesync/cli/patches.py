"""``vimesync patches check``: the pre-merge gate for the engine patch stack."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from vimesync.check import check_options, run_check
from vimesync.checkmodel import CheckReport, check_to_dict
from vimesync.cli import output
from vimesync.cli.app import app
from vimesync.cli.progress import parse_progress
from vimesync.config import load_config
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK

patches_app = typer.Typer(help="Work with the engine patch stack.", no_args_is_help=True)
app.add_typer(patches_app, name="patches")


@patches_app.command("check")
def check(
    source: Annotated[
        Path | None,
        typer.Option(help="Engine source: git repo (work tree or bare), directory, .whl/.zip/.tar.gz."),
    ] = None,
    rev: Annotated[
        str | None,
        typer.Option(help="For a git source: the commit-ish to check (default: the pin's rev)."),
    ] = None,
    series: Annotated[
        Path | None, typer.Option(help="Quilt series file (default: the pin's series).")
    ] = None,
    strip: Annotated[int | None, typer.Option(min=0, help="Default -pN for patches (default 1).")] = None,
    python: Annotated[
        str | None, typer.Option(help="Grammar target X.Y (default: what the tree declares).")
    ] = None,
    export: Annotated[
        Path | None, typer.Option(help="Write the whole patched tree here (must be empty or absent).")
    ] = None,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="Apply every patch even after one fails.")
    ] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Parse every file afresh.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
    config: Annotated[
        Path | None, typer.Option(help="Config file (default: ./vimesync.toml if present).")
    ] = None,
) -> int:
    """Apply the patch stack to the exact pinned source and parse every Python file of the result."""
    opts = check_options(
        load_config(config),
        source=source,
        rev=rev,
        series=series,
        strip=strip,
        python=python,
        keep_going=keep_going,
        export=export,
        use_cache=not no_cache,
    )
    with parse_progress(enabled=not json_out and output.progress_enabled()) as progress:
        report = run_check(opts, progress=progress)
    if json_out:
        output.emit_json(check_to_dict(report))
    else:
        render(report)
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


def render(report: CheckReport) -> None:
    """Human output: a table per patch, then failures to the hunk, then the parse verdict."""
    con = output.stdout
    src = report.source
    con.print(
        f"[bold]{report.engine}[/] source: {src.kind} {output.escape(src.path)}"
        + (f" @ {src.rev}" if src.rev else "")
    )
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("Patch")
    table.add_column("Result")
    table.add_column("Files", justify="right")
    table.add_column("Hunks", justify="right")
    for i, p in enumerate(report.patches, 1):
        if p.skipped:
            verdict = "[dim]skipped[/]"
        elif not p.ok:
            verdict = "[bold red]FAILED[/]"
        elif p.offsets:
            verdict = f"[yellow]applied, {len(p.offsets)} hunk(s) at offset[/]"
        else:
            verdict = "[green]applied[/]"
        table.add_row(str(i), output.escape(p.name), verdict, str(p.files), str(p.hunks))
    con.print(table)
    for p in report.patches:
        for o in p.offsets:
            con.print(
                f"  {output.escape(p.name)}: {output.escape(o.file)} hunk #{o.hunk} at offset {o.offset:+d}"
            )
        for f in p.failures:
            where = f"hunk #{f.hunk} ({f.header})" if f.hunk else "file"
            name, file, reason = output.escape(p.name), output.escape(f.file), output.escape(f.reason)
            con.print(f"[red]  {name}: {file}: {output.escape(where)}: {reason}[/]")
            if f.first_mismatch is not None:
                con.print(f"    hunk line {f.first_mismatch} expected: {f.expected!r}")
                con.print(f"    {'':>{len(str(f.first_mismatch)) + 10}}found:    {f.found!r}")
            if f.nearest_line is not None:
                matched = getattr(f, "nearest_matched", None)
                extent = f", {matched} of the hunk's context/removed lines match there" if matched else ""
                con.print(f"    closest match starts at line {f.nearest_line}{extent}")
    py = report.python
    if py is None:
        con.print(
            "[dim]Python files not parsed: the stack did not apply (use --keep-going to parse anyway).[/]"
        )
        return
    cached = f", {py.cached:,} from cache" if py.cached else ""
    how = f"{py.version_source}; {output.escape(py.interpreter)}{cached}"
    con.print(f"Parsed {py.files:,} Python files with the {py.version} grammar ({how}).")
    for bad in py.failed:
        line = f":{bad.line}" if bad.line else ""
        con.print(f"[red]  {output.escape(bad.path)}{line}: {output.escape(bad.message)}[/]")
    for c in py.conflict_markers:
        con.print(
            f"[red]  {output.escape(c.path)}:{c.line}: leftover conflict marker {output.escape(c.text)!r}[/]"
        )
    if report.ok:
        n = len(report.patches)
        con.print(
            f"[bold green]OK[/]: all {n} patches apply sequentially to the exact pin; "
            f"{py.files:,} patched Python files parse."
        )
    else:
        con.print("[bold red]FAILED[/]")
