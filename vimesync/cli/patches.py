"""``vimesync patches check``: the pre-merge gate for the engine patch stack."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    ApplierOpt,
    ConfigOpt,
    EngineOpt,
    ExportOpt,
    FormatOpt,
    FuzzOpt,
    JsonOpt,
    JunitOpt,
    KeepGoingOpt,
    NoCacheOpt,
    PythonOpt,
    RevOpt,
    SeriesOpt,
    SourceOpt,
    StrictOpt,
    StripOpt,
    output_format,
)


def check(
    engine: EngineOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    python: PythonOpt = None,
    export: ExportOpt = None,
    keep_going: KeepGoingOpt = False,
    strict: StrictOpt = False,
    no_cache: NoCacheOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
    applier: ApplierOpt = None,
    fuzz: FuzzOpt = None,
) -> int:
    """Apply the patch stack to the exact pinned source and parse every Python file of the result."""
    # Imported here, not at the top: --help and other commands skip them.
    from vimesync.app.check import CheckRequest
    from vimesync.app.check import check as run
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.progress import progress_for
    from vimesync.cli.render.check import render_check

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    request = CheckRequest(
        engine,
        source,
        rev,
        series,
        strip,
        python,
        export,
        keep_going,
        strict,
        not no_cache,
        config,
        applier=applier.value if applier is not None else None,
        fuzz=fuzz,
    )
    result = run(request, progress=progress_for(json_out))
    output.notes(result.notes)
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            render_check(result)
        if export is not None:
            output.stderr.print(output.styled(f"exported the patched tree to {export}"))
    ci.emit_result(result)
    return result.exit_code
