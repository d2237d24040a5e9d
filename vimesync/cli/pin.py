"""``vimesync pin bump`` (the patch stack at the current pin beside the stack at a new one),
``pin scan`` (the stack at several releases) and ``pin radar`` (the upstream state of what the
patches reference)."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    BackportsFlagOpt,
    BackportsOpt,
    ConfigOpt,
    ConflictsOpt,
    EngineArg,
    EngineRepoOpt,
    JsonOpt,
    JunitOpt,
    MaxCandidatesOpt,
    MergeOpt,
    NoCacheOpt,
    OfflineOpt,
    PythonOpt,
    RefreshOpt,
    ReleasesOpt,
    RevOpt,
    SeriesOpt,
    SourceOpt,
    StripOpt,
    SvgOpt,
    TableFormatOpt,
    ToOpt,
    WriteOpt,
    output_format,
)


def bump(
    engine: EngineArg = None,
    to: ToOpt = None,
    engine_repo: EngineRepoOpt = None,
    write: WriteOpt = False,
    refresh: RefreshOpt = False,
    conflicts: ConflictsOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    python: PythonOpt = None,
    no_cache: NoCacheOpt = False,
    fmt: TableFormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Run the stack at the current pin and at a new rev or source; say, per patch, what changes
    (--format markdown: a pull-request body, with the engine's changelog on the patched files)."""
    # Imported here, not at the top: --help and other commands skip them.
    from vimesync.app.bump import BumpRequest
    from vimesync.app.bump import bump as run
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.progress import progress_for
    from vimesync.cli.render.bump import render_bump

    form = output_format(fmt, json_)
    json_out = form == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    request = BumpRequest(
        to,
        engine,
        write,
        refresh,
        conflicts,
        source,
        rev,
        series,
        strip,
        python,
        not no_cache,
        config,
        changelog=form != "text",  # the PR body's (and the JSON's) engine changelog
        engine_repo=engine_repo,
    )
    result = run(request, progress=progress_for(json_out))
    if json_out:
        output.emit_json(result.to_json())
    elif form == "markdown":
        with ci.human_output():
            output.stdout.file.write(result.markdown())
            output.stdout.file.flush()
    else:
        with ci.human_output():
            render_bump(result)
    ci.emit_result(result)
    return result.exit_code


def scan(
    engine: EngineArg = None,
    to: ReleasesOpt = None,
    merge: MergeOpt = None,
    svg: SvgOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    python: PythonOpt = None,
    no_cache: NoCacheOpt = False,
    fmt: TableFormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Run the stack at several releases; print a patch x release matrix (or merge per-release ones)."""
    from vimesync.app.scan import ScanRequest
    from vimesync.app.scan import scan as run
    from vimesync.cli.progress import progress_for
    from vimesync.cli.render.scan import render_scan

    form = output_format(fmt, json_)
    request = ScanRequest(
        tuple(to or ()),
        tuple(merge or ()),
        svg,
        engine,
        source,
        rev,
        series,
        strip,
        python,
        not no_cache,
        config,
    )
    result = run(request, progress=progress_for(form == "json"))
    if form == "json":
        output.emit_json(result.to_json())
    else:
        render_scan(result, markdown=form == "markdown")
    return result.exit_code


def radar(
    engine: EngineArg = None,
    engine_repo: EngineRepoOpt = None,
    offline: OfflineOpt = False,
    backports: BackportsFlagOpt = False,
    to: BackportsOpt = None,
    max_candidates: MaxCandidatesOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    fmt: TableFormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Where the upstream PRs the patches reference stand (GitHub, the pin): what to drop or keep;
    with --backports/--to, the engine commits after the pin that touch the patched lines or files."""
    from vimesync.app.radar import RadarRequest
    from vimesync.app.radar import radar as run
    from vimesync.cli.render.radar import render_radar

    form = output_format(fmt, json_)
    request = RadarRequest(
        engine, engine_repo, offline, source, rev, series, strip, config, backports, to, max_candidates
    )
    result = run(request)
    if form == "json":
        output.emit_json(result.to_json())
    else:
        render_radar(result, markdown=form == "markdown")
    return result.exit_code
