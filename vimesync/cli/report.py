"""``vimesync report``: the sync PR description, every figure computed.

Runs the upstream walk, the patch-stack check and the changed-path audit (each only when its
inputs are given: flags win over vimesync.toml and the pins), then renders markdown or JSON to
stdout or ``--output``, and with ``--publish owner/repo#N`` puts it into that PR's description.

Exit codes: 0 the report was generated and every gate it covers (classified, patches, audit,
tests, ci) was evaluated and holds; 1 the report was generated (and written/published) but a gate
failed (a patch does not apply, a patched Python file does not parse, a changed path is
unreviewed or stale, a required suite is not recorded green, exact-head CI is not green) or was
not checked (no upstream, no source, no baseline, no token, no suite required) and not switched
off in sop/gates.toml or with ``--skip-gate``; 2 bad input.
"""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    BaselineOpt,
    CiPrOpt,
    CiRepoOpt,
    ConfigOpt,
    DocFormatOpt,
    DownstreamOpt,
    EngineOpt,
    GithubOpt,
    HeadOpt,
    JsonOpt,
    JunitOpt,
    KeepGoingOpt,
    MapOpt,
    OutputOpt,
    PolicyOpt,
    PrMetadataOpt,
    PublishOpt,
    RangeOpt,
    RequireOpt,
    RevOpt,
    SeriesOpt,
    SkipGateOpt,
    SourceOpt,
    StripOpt,
    SyncOpt,
    UpstreamOpt,
    UpstreamRepoOpt,
    output_format,
)


def report(
    upstream: UpstreamOpt = None,
    range_: RangeOpt = None,
    upstream_repo: UpstreamRepoOpt = None,
    policy: PolicyOpt = None,
    downstream: DownstreamOpt = None,
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    map_: MapOpt = None,
    sync: SyncOpt = None,
    engine: EngineOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    keep_going: KeepGoingOpt = False,
    pr_metadata: PrMetadataOpt = None,
    github: GithubOpt = False,
    fmt: DocFormatOpt = None,
    json_: JsonOpt = False,
    out_file: OutputOpt = None,
    publish: PublishOpt = None,
    config: ConfigOpt = None,
    ci_repo: CiRepoOpt = None,
    ci_pr: CiPrOpt = None,
    require: RequireOpt = None,
    skip_gate: SkipGateOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Write the sync PR description: summary, engine patches, final audit, validation and gates."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.context import SyncRequest
    from vimesync.app.engines import EngineFlags
    from vimesync.app.report import CiFlags, ReportRequest, make_report, publish_report, refuse_early
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.progress import parse_progress
    from vimesync.cli.render.report import show_report

    as_json = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=as_json and out_file is None)
    refuse_early(publish, out_file)
    sync_req = SyncRequest(
        config=config, downstream=downstream, upstream=upstream, upstream_repo=upstream_repo,
        range_=range_, baseline=baseline, head=head, sync=sync,
        path_map=tuple(map_) if map_ else None, policy=policy,
    )  # fmt: skip
    request = ReportRequest(
        sync=sync_req,
        engines=EngineFlags(engine, source, rev, series, strip, keep_going),
        ci=CiFlags(ci_repo, ci_pr, tuple(require or ())),
        pr_metadata=pr_metadata, github=github, skip_gate=tuple(skip_gate or ()), publish=publish,
    )  # fmt: skip
    with parse_progress(enabled=output.progress_enabled()) as progress:
        result = make_report(request, progress=progress)
    show_report(result, as_json=as_json, out_file=out_file, ci=ci)
    if publish is not None:
        done = publish_report(publish, result)
        verb = "updated" if done.changed else "already up to date:"
        output.stderr.print(output.styled(f"{verb} {done.url or done.target}"))
    return result.exit_code
