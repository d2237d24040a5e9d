"""``vimesync ci``: the exact-head CI verdict of one commit (or a pull request's head)."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    CiShaOpt,
    ConfigOpt,
    FormatOpt,
    HeadPrOpt,
    JsonOpt,
    JunitOpt,
    RepoOpt,
    RequireOpt,
    output_format,
)
from vimesync.errors import BadInput


def ci(
    repo: RepoOpt = None,
    pr: HeadPrOpt = None,
    sha: CiShaOpt = None,
    require: RequireOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Read the combined status and check runs of exactly one commit and give one verdict:
    green, pending, failing or missing (a required context never reported). With --pr, results
    on the PR's earlier commits are listed as not evidence for its head. Exit 0 green, 1 not."""
    from vimesync.app.ci import CiRequest
    from vimesync.app.ci import ci as run
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.render.ci import render_ci

    json_out = output_format(fmt, json_) == "json"
    ci_out = CiOutputs(junit, annotations, json_out=json_out)
    if pr is not None and len(pr) > 1:
        raise BadInput("ci reads one PR's head: pass --pr N once")
    result = run(CiRequest(repo, pr[0] if pr else None, sha, tuple(require or ()), config))
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci_out.human_output():
            render_ci(result)
    ci_out.emit_result(result)
    return result.exit_code
