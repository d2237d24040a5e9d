"""``vimesync sync``: walk, carry, patches check, audit, sop status and report in one run, from
the downstream checkout; it stops only at a decision a human must make, and says which and how to
move on (``--continue`` after it). State in the git directory: ``--status`` shows it, ``--abort``
drops it.

Exit codes: 0 every gate holds (the report written), or up to date; 1 stopped at a decision; 2
bad input; 130 (SIGINT) or 143 (SIGTERM) stopped by a signal: ``vimesync sync --continue`` resumes.
"""

from __future__ import annotations

import os

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    BaselineOpt,
    BranchOpt,
    ConfigOpt,
    DirectOpt,
    DownstreamOpt,
    FormatOpt,
    JsonOpt,
    JunitOpt,
    OntoOpt,
    PrOpt,
    PublishOpt,
    RangeOpt,
    SkipGateOpt,
    SquashOpt,
    SyncAbortOpt,
    SyncContinueOpt,
    SyncOutputOpt,
    SyncStatusOpt,
    output_format,
)
from vimesync.errors import BadInput


def sync_command(
    range_: RangeOpt = None,
    pr: PrOpt = None,
    direct: DirectOpt = "skip",
    squash: SquashOpt = False,
    onto: OntoOpt = "HEAD",
    branch: BranchOpt = None,
    baseline: BaselineOpt = None,
    skip_gate: SkipGateOpt = None,
    publish: PublishOpt = None,
    out_file: SyncOutputOpt = None,
    continue_: SyncContinueOpt = False,
    abort: SyncAbortOpt = False,
    status: SyncStatusOpt = False,
    downstream: DownstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Sync in one run: walk, carry, patches check, audit, sop status, report; stop at a decision."""
    from vimesync.app.sync import SyncMode, SyncRunRequest, sync
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.render.sync import render_step, render_sync

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    modes = [
        m
        for m, on in ((SyncMode.CONTINUE, continue_), (SyncMode.ABORT, abort), (SyncMode.STATUS, status))
        if on
    ]
    if len(modes) > 1:
        raise BadInput(f"{' and '.join(m.value for m in modes)}: give one of them")
    request = SyncRunRequest(
        modes[0] if modes else SyncMode.START, config, downstream,
        range_, tuple(pr or ()), direct, squash, onto, branch,
        baseline, tuple(skip_gate or ()), publish, out_file, dict(os.environ),
    )  # fmt: skip
    result = sync(request, on_step=None if json_out else render_step)
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            render_sync(result)
    ci.emit_result(result)
    return result.exit_code
