"""``vimesync patches check``: the pre-merge gate for the engine patch stack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import ENGINE, OUTPUT, SYNC

if TYPE_CHECKING:
    from vimesync.app.flags import EngineFlags, OutputFlags, SyncFlags
    from vimesync.settings import Settings


def check(
    settings: Settings,
    engine: EngineFlags = ENGINE.take(
        "engine",
        "source",
        "rev",
        "series",
        "strip",
        "python",
        "export",
        "keep_going",
        "strict",
        "no_cache",
        "applier",
        "fuzz",
    ),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Apply the patch stack to the exact pinned source and parse every Python file of the result."""
    # Imported here, not at the top: --help and other commands skip them.
    from vimesync.app.check import check as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.check import render_check

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        return emit.result(run(ws, engine, progress=emit.progress()), render_check)
