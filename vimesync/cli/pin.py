"""``vimesync pin bump``: the patch stack at the current pin beside the stack at a new one."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    ConfigOpt,
    ConflictsOpt,
    EngineArg,
    FormatOpt,
    JsonOpt,
    NoCacheOpt,
    PythonOpt,
    RefreshOpt,
    RevOpt,
    SeriesOpt,
    SourceOpt,
    StripOpt,
    ToOpt,
    WriteOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput

if TYPE_CHECKING:
    from rich.text import Text

    from vimesync.check.bump import BumpReport
    from vimesync.check.model import CheckOptions
    from vimesync.config import Config
    from vimesync.sources import SourceInfo


def bump(
    engine: EngineArg = None,
    to: ToOpt = None,
    write: WriteOpt = False,
    refresh: RefreshOpt = False,
    conflicts: ConflictsOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    python: PythonOpt = None,
    no_cache: NoCacheOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Run the stack at the current pin and at a new rev or source; say, per patch, what changes."""
    # Imported here, not at the top: --help and other commands skip them.
    from vimesync.check.bump import BumpOptions, plan_writes, run_bump
    from vimesync.check.model import check_options
    from vimesync.check.pinwrite import write_together
    from vimesync.check.run import pinned_source
    from vimesync.cli.progress import parse_progress
    from vimesync.config import load_config
    from vimesync.safefs import ensure_output_dir

    json_out = output_format(fmt, json_) == "json"
    if not to:
        raise BadInput("pin bump needs --to REV|SOURCE: the new pin")
    if conflicts is not None and not refresh:
        raise BadInput("--conflicts DIR goes with --refresh (the merged files come from refreshing)")
    cfg = load_config(config)
    opts = check_options(
        cfg,
        engine=engine,
        source=source,
        rev=rev,
        series=series,
        strip=strip,
        python=python,
        use_cache=not no_cache,
    )
    # A pypi: pin is fetched (once, into the cache) and an archive checked against its sha256.
    current, _ = pinned_source(opts)
    opts = replace(opts, source=current, package=None)
    to_source, to_rev = _target(to, opts)
    if conflicts is not None:
        ensure_output_dir(conflicts, what="--conflicts")  # refused before any work
    with parse_progress(enabled=not json_out and output.progress_enabled()) as progress:
        report = run_bump(BumpOptions(opts, to_source, to_rev, refresh=refresh), progress=progress)
    pins = _pin_edits(cfg, opts, report.new, to_source) if write else None
    plan = plan_writes(report, refresh=refresh, pins=pins)
    write_together(plan.files)
    if conflicts is not None:
        _write_conflicts(conflicts, plan.conflicts)
    written = [str(p) for p in plan.files]
    if json_out:
        from vimesync.check.bump import bump_to_dict

        output.emit_json(bump_to_dict(report, written=written))
    else:
        _render(report, written, conflicts if plan.conflicts else None)
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


def _target(to: str, opts: CheckOptions) -> tuple[Path, str | None]:
    """``--to``: a path that exists is a source; else a revision of the current (git) source."""
    candidate = Path(to)
    if to.startswith(("/", ".", "~")) or os.path.lexists(candidate):
        return candidate.expanduser(), None
    from vimesync import git

    assert opts.source is not None  # bump() resolved a pypi: pin to its fetched archive
    if git.repo_at(opts.source) is None:
        raise BadInput(f"--to {to!r}: no such file or folder, and the current source is not a git repository")
    return opts.source, to


def _pin_edits(cfg: Config, opts: CheckOptions, new: SourceInfo, to_source: Path) -> dict[Path, bytes]:
    """The pin (and, when the source moves, the file naming it) with the new values."""
    from vimesync.check.pinwrite import edit_toml, relative_to_file
    from vimesync.sources.pinned import sha256_of

    pin_file = opts.pin_file
    if pin_file is None or opts.source is None:
        raise BadInput("--write needs an engine pin file ([engine] pin in vimesync.toml)")
    edits: dict[Path, dict[str, str]] = {}
    if new.rev is not None:
        edits.setdefault(pin_file, {})["rev"] = new.rev
    if os.path.abspath(to_source) != os.path.abspath(opts.source):
        # The file that named the source (a config's machine-local source), else the pin.
        named_by = opts.source_origin if opts.source_origin not in (None, "--source") else None
        origin = Path(named_by) if named_by else pin_file
        values = edits.setdefault(origin, {})
        values["source"] = relative_to_file(to_source, origin)
        if new.kind == "archive" and _has_key(origin, "sha256"):
            values["sha256"] = sha256_of(to_source)
    return {path: edit_toml(path, "engine", values) for path, values in edits.items()}


def _has_key(path: Path, key: str) -> bool:
    from vimesync.config import read_toml

    table = read_toml(path).get("engine")
    return isinstance(table, dict) and key in table


def _write_conflicts(folder: Path, files: tuple[tuple[str, str, bytes], ...]) -> None:
    from vimesync.git import MODE_FILE
    from vimesync.sources.model import write_file

    for patch, path, data in files:
        write_file(folder, f"{patch}/{path}", data, MODE_FILE)


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


def _render(report: BumpReport, written: list[str], conflicts: Path | None) -> None:
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
