"""``vimesync walk``: classify the upstream PRs of a range (table or one JSON document)."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    AcceptSimilarOpt,
    Annotations,
    AnnotationsOpt,
    ConfigOpt,
    DownstreamRevOpt,
    FormatOpt,
    GithubOpt,
    JsonOpt,
    JunitOpt,
    PolicyOpt,
    PrMetadataOpt,
    RangeOpt,
    UpstreamOpt,
    WalkDownstreamOpt,
    output_format,
)


def walk_command(
    upstream: UpstreamOpt = None,
    range_: RangeOpt = None,
    policy: PolicyOpt = None,
    downstream: WalkDownstreamOpt = None,
    downstream_rev: DownstreamRevOpt = None,
    pr_metadata: PrMetadataOpt = None,
    accept_similar: AcceptSimilarOpt = False,
    github: GithubOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Walk an upstream commit range into merged PRs and classify them (applicable/excluded/mirrored)."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.walk import WalkRequest, walk
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.render.walk import render_walk

    as_json = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=as_json)
    request = WalkRequest(
        upstream, range_, policy, downstream, downstream_rev, pr_metadata, github, config, accept_similar
    )
    result = walk(request)
    if as_json:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            render_walk(result)
    ci.emit_result(result)
    return result.exit_code
