"""``vimesync init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    EngineRepoOpt,
    ForceOpt,
    FormatOpt,
    InitDownstreamOpt,
    InitEngineOpt,
    JsonOpt,
    MapOpt,
    RevOpt,
    SourceOpt,
    UpstreamLocationOpt,
    UpstreamRepoOpt,
    output_format,
)


def init(
    upstream: UpstreamLocationOpt = None,
    upstream_repo: UpstreamRepoOpt = None,
    map_: MapOpt = None,
    engine: InitEngineOpt = None,
    engine_repo: EngineRepoOpt = None,
    rev: RevOpt = None,
    source: SourceOpt = None,
    downstream: InitDownstreamOpt = None,
    force: ForceOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
) -> int:
    """Write vimesync.toml, the upstream and engine pins, patches/series, sop/policy.toml and
    sop/SYNC.md (each with commented examples), then print the next three commands."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.init import InitRequest
    from vimesync.app.init import init as run
    from vimesync.cli.render.init import render_init

    as_json = output_format(fmt, json_) == "json"
    request = InitRequest(
        upstream, upstream_repo, tuple(map_ or ()), engine, engine_repo, rev, source, downstream, force
    )
    result = run(request)
    if as_json:
        output.emit_json(result.to_json())
    else:
        render_init(result)
    return result.exit_code
