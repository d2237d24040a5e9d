"""``vimesync walk``: classify the upstream PRs of a range (table or one JSON document)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT, SYNC

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags, SyncFlags
    from vimesync.settings import Settings


def walk_command(
    settings: Settings,
    sync: SyncFlags = SYNC.take(
        "upstream",
        "range_",
        "policy",
        "downstream",
        "downstream_rev",
        "pr_metadata",
        "accept_similar",
        "github",
        "config",
        downstream="WalkDownstreamOpt",
    ),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Walk an upstream commit range into merged PRs and classify them (applicable/excluded/mirrored)."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.walk import walk
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.walk import render_walk

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, downstream="none", engines=False) as ws:
        return emit.result(walk(ws, progress=emit.progress()), render_walk)
