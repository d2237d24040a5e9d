"""``vimesync patches lint`` and ``vimesync patches describe``: review the patch stack's shape and
metadata, and fill in a patch's DEP-3 header."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    AppliedUpstreamOpt,
    BugOpt,
    ConfigOpt,
    DescriptionOpt,
    EngineOpt,
    FormatOpt,
    ForwardedOpt,
    FromOpt,
    IgnoreOpt,
    JsonOpt,
    JunitOpt,
    OriginKindOpt,
    OriginOpt,
    PatchNameArg,
    RevOpt,
    SelectOpt,
    SeriesOpt,
    SourceOpt,
    StrictOpt,
    StripOpt,
    output_format,
)


def lint(
    series: SeriesOpt = None,
    engine: EngineOpt = None,
    strip: StripOpt = None,
    strict: StrictOpt = False,
    source: SourceOpt = None,
    rev: RevOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
) -> int:
    """Check the series against its folder and every patch's header, line endings and index lines
    (codes in docs/lint.md). Exit 1 on findings."""
    from vimesync.app.lint import LintRequest
    from vimesync.app.lint import lint as run
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.render.lint import render_lint

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    codes = {"select": tuple(select or ()), "ignore": tuple(ignore or ())}
    result = run(LintRequest(series, engine, strip, strict, source, rev, config, **codes))
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            render_lint(result)
    ci.emit_result(result)
    return result.exit_code


def describe(
    name: PatchNameArg,
    description: DescriptionOpt,
    origin: OriginOpt = None,
    series: SeriesOpt = None,
    engine: EngineOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    origin_kind: OriginKindOpt = "upstream",
    bug: BugOpt = None,
    forwarded: ForwardedOpt = None,
    applied_upstream: AppliedUpstreamOpt = None,
) -> int:
    """NAME (the patch, as the series names it): add or update its DEP-3 header in place (the
    diff is kept byte for byte; git apply ignores the header), so the report's Purpose / PR
    column is filled."""
    from dataclasses import replace

    from vimesync.app.lint import DescribeRequest
    from vimesync.app.lint import describe as run
    from vimesync.cli.render.lint import render_describe

    json_out = output_format(fmt, json_) == "json"
    request = DescribeRequest(name, description, tuple(origin or ()), series, engine, config)
    request = replace(request, origin_kind=origin_kind, bug=tuple(bug or ()), forwarded=forwarded)
    result = run(replace(request, applied_upstream=applied_upstream))
    if json_out:
        output.emit_json(result.to_json())
    else:
        render_describe(result)
    return result.exit_code


def refresh(
    name: PatchNameArg,
    from_: FromOpt = None,
    series: SeriesOpt = None,
    engine: EngineOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """NAME (the patch, as the series names it): re-make it from the merged files you edited in
    the work folder `pin bump --refresh` left (conflict markers resolved), against the new pin;
    written when it then applies there with no offset. Then run the bump again."""
    from vimesync.app.refresh import RefreshRequest
    from vimesync.app.refresh import refresh as run
    from vimesync.cli.render.refresh import render_refresh

    json_out = output_format(fmt, json_) == "json"
    result = run(RefreshRequest(name, from_, engine, series, None, config))
    if json_out:
        output.emit_json(result.to_json())
    else:
        render_refresh(result)
    return result.exit_code
