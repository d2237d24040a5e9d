"""``pin bump``: the patch stack at the current pin beside the stack at a new one; with
``write``, the pin moved (and, with ``refresh``, the patches re-made for it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.check.bump import BumpReport
from vimesync.check.model import CheckOptions
from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.outputs.model import Findings
from vimesync.sources import SourceInfo


@dataclass(frozen=True)
class BumpRequest:
    """What the flags say (None: not given); ``to`` is required."""

    to: str | None
    engine: str | None = None
    write: bool = False
    refresh: bool = False
    conflicts: Path | None = None
    source: Path | None = None
    rev: str | None = None
    series: Path | None = None
    strip: int | None = None
    python: str | None = None
    use_cache: bool = True
    config: Path | None = None


@dataclass(frozen=True)
class BumpOutcome:
    report: BumpReport
    written: tuple[str, ...] = ()  # the files replaced (pins, patches, series), all or none
    conflicts: Path | None = None  # the folder the merged files with conflict markers went to
    kind: Kind = Kind.BUMP

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.check.bump import bump_to_dict

        return document(self.kind, self.exit_code, bump_to_dict(self.report, written=list(self.written)))

    def findings(self) -> Findings:
        from vimesync.outputs.findings import bump_findings

        return bump_findings(self.report)


def bump(request: BumpRequest, *, progress: Progress = no_progress) -> BumpOutcome:
    """Run the stack at both pins in one walk, then write what ``write``/``refresh`` ask."""
    from vimesync.check.bump import BumpOptions, plan_writes, run_bump
    from vimesync.check.model import check_options
    from vimesync.check.pinwrite import write_together
    from vimesync.check.run import pinned_source
    from vimesync.config import load_config
    from vimesync.safefs import ensure_output_dir

    r = request
    if not r.to:
        raise BadInput("pin bump needs --to REV|SOURCE: the new pin")
    if r.conflicts is not None and not r.refresh:
        raise BadInput("--conflicts DIR goes with --refresh (the merged files come from refreshing)")
    cfg = load_config(r.config)
    opts = check_options(
        cfg,
        engine=r.engine,
        source=r.source,
        rev=r.rev,
        series=r.series,
        strip=r.strip,
        python=r.python,
        use_cache=r.use_cache,
    )
    # A pypi: pin is fetched (once, into the cache) and an archive checked against its sha256.
    current, _ = pinned_source(opts)
    opts = replace(opts, source=current, package=None)
    to_source, to_rev = _target(r.to, opts)
    if r.conflicts is not None:
        ensure_output_dir(r.conflicts, what="--conflicts")  # refused before any work
    with progress() as update:
        report = run_bump(BumpOptions(opts, to_source, to_rev, refresh=r.refresh), progress=update)
    pins = _pin_edits(cfg, opts, report.new, to_source) if r.write else None
    plan = plan_writes(report, refresh=r.refresh, pins=pins)
    write_together(plan.files)
    if r.conflicts is not None:
        _write_conflicts(r.conflicts, plan.conflicts)
    written = tuple(str(p) for p in plan.files)
    return BumpOutcome(report, written, r.conflicts if plan.conflicts else None)


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
