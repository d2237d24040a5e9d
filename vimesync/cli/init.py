"""``vimesync init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT
from vimesync.cli.options import (
    EngineRepoOpt,
    ForceOpt,
    InitDownstreamOpt,
    InitEngineOpt,
    MapOpt,
    RevOpt,
    SourceOpt,
    UpstreamLocationOpt,
    UpstreamRepoOpt,
)

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags
    from vimesync.settings import Settings


def init(
    settings: Settings,
    upstream: UpstreamLocationOpt = None,
    upstream_repo: UpstreamRepoOpt = None,
    map_: MapOpt = None,
    engine: InitEngineOpt = None,
    engine_repo: EngineRepoOpt = None,
    rev: RevOpt = None,
    source: SourceOpt = None,
    downstream: InitDownstreamOpt = None,
    force: ForceOpt = False,
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Write vimesync.toml, the upstream and engine pins, patches/series, sop/policy.toml and
    sop/SYNC.md (each with commented examples), then print the next three commands."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.init import InitRequest
    from vimesync.app.init import init as run
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.init import render_init

    emit = Emit(out, settings)
    request = InitRequest(
        upstream=upstream,
        upstream_repo=upstream_repo,
        maps=tuple(map_ or ()),
        engine=engine,
        engine_repo=engine_repo,
        rev=rev,
        source=source,
        downstream=downstream,
        force=force,
    )
    return emit.result(run(request), render_init)
