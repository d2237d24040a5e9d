"""``vimesync pin bump``, ``pin scan`` and ``pin radar``: move the engine pin, see the stack at many
releases, and where the upstream PRs its patches reference stand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import ENGINE, OUTPUT, SYNC
from vimesync.cli.options import (
    BackportsFlagOpt,
    BackportsOpt,
    ConflictsOpt,
    MaxCandidatesOpt,
    MergeOpt,
    OfflineOpt,
    RefreshOpt,
    ReleasesOpt,
    SvgOpt,
    ToOpt,
    WriteOpt,
)

if TYPE_CHECKING:
    from vimesync.app.flags import EngineFlags, OutputFlags, SyncFlags
    from vimesync.settings import Settings


def bump(
    settings: Settings,
    to: ToOpt = None,
    write: WriteOpt = False,
    refresh: RefreshOpt = False,
    conflicts: ConflictsOpt = None,
    engine: EngineFlags = ENGINE.take(
        "engine", "engine_repo", "source", "rev", "series", "strip", "python", "no_cache"
    ),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations", format="TableFormatOpt"),
) -> int:
    """Run the stack at the current pin and at a new rev or source; say, per patch, what changes
    (--format markdown: a pull-request body, with the engine's changelog on the patched files)."""
    # Imported here, not at the top: --help and other commands skip them.
    from vimesync.app.bump import BumpRequest
    from vimesync.app.bump import bump as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.bump import render_bump

    emit = Emit(out, settings)
    # the PR body's (and the JSON's) engine changelog
    request = BumpRequest(
        to=to, write=write, refresh=refresh, conflicts=conflicts, changelog=out.format != "text"
    )
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        result = run(ws, engine, request, progress=emit.progress())
    return emit.result(result, lambda r: render_bump(r, markdown=out.format == "markdown"))


def scan(
    settings: Settings,
    to: ReleasesOpt = None,
    merge: MergeOpt = None,
    svg: SvgOpt = None,
    engine: EngineFlags = ENGINE.take("engine", "source", "rev", "series", "strip", "python", "no_cache"),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", format="TableFormatOpt"),
) -> int:
    """Run the stack at several releases; print a patch x release matrix (or merge per-release ones)."""
    from vimesync.app.scan import ScanRequest
    from vimesync.app.scan import scan as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.scan import render_scan

    emit = Emit(out, settings)
    request = ScanRequest(to=tuple(to or ()), merge=tuple(merge or ()), svg=svg)
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        result = run(ws, engine, request, progress=emit.progress())
    return emit.result(result, lambda r: render_scan(r, markdown=out.format == "markdown"))


def radar(
    settings: Settings,
    offline: OfflineOpt = False,
    backports: BackportsFlagOpt = False,
    to: BackportsOpt = None,
    max_candidates: MaxCandidatesOpt = None,
    engine: EngineFlags = ENGINE.take("engine", "engine_repo", "source", "rev", "series", "strip"),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", format="TableFormatOpt"),
) -> int:
    """Where the upstream PRs the patches reference stand (GitHub, the pin): what to drop or keep;
    with --backports/--to, the engine commits after the pin that touch the patched lines or files."""
    from vimesync.app.radar import RadarRequest
    from vimesync.app.radar import radar as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.radar import render_radar

    emit = Emit(out, settings)
    request = RadarRequest(offline=offline, backports=backports, to=to, max_candidates=max_candidates)
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        result = run(ws, engine, request)
    return emit.result(result, lambda r: render_radar(r, markdown=out.format == "markdown"))
