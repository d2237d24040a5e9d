"""``vimesync carry``: bring the applicable upstream PRs into a new sync branch.

Exit codes: 0 carried (or nothing to carry, or a plan printed); 1 stopped at a conflict (the
worktree is in git's conflict state; resolve, ``git add``, ``--continue``), or ``--continue`` with
files still unresolved; 2 bad input; 130 (SIGINT) or 143 (SIGTERM) stopped by a signal once the
carry began: one line, ``interrupted: `vimesync carry --continue` resumes`` (with ``--json``, an
error document saying so), and ``--continue`` goes on from where the branch is.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    AbortOpt,
    AcceptSimilarOpt,
    Annotations,
    AnnotationsOpt,
    BranchOpt,
    ConfigOpt,
    ContinueOpt,
    DirectOpt,
    DownstreamOpt,
    DryRunOpt,
    FormatOpt,
    JsonOpt,
    JunitOpt,
    OntoOpt,
    PolicyOpt,
    PrMetadataOpt,
    PrOpt,
    RangeOpt,
    SkipOpt,
    SquashOpt,
    StatusOpt,
    UpstreamOpt,
    WorktreeOpt,
    output_format,
)
from vimesync.errors import BadInput

if TYPE_CHECKING:
    from vimesync.app.carry import CarryMode


def carry_command(
    range_: RangeOpt = None,
    pr: PrOpt = None,
    policy: PolicyOpt = None,
    branch: BranchOpt = None,
    onto: OntoOpt = "HEAD",
    worktree: WorktreeOpt = None,
    squash: SquashOpt = False,
    direct: DirectOpt = "skip",
    dry_run: DryRunOpt = False,
    continue_: ContinueOpt = False,
    skip: SkipOpt = False,
    abort: AbortOpt = False,
    status: StatusOpt = False,
    upstream: UpstreamOpt = None,
    downstream: DownstreamOpt = None,
    pr_metadata: PrMetadataOpt = None,
    accept_similar: AcceptSimilarOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Carry the applicable upstream PRs into a new sync branch (path map, translations, 3-way merge)."""
    from vimesync.app.carry import CarryRequest, carry
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.render.carry import render_carry

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    request = CarryRequest(
        _mode(continue_=continue_, skip=skip, abort=abort, status=status),
        range_, tuple(pr or ()), policy, branch, onto, worktree, squash, direct, dry_run,
        upstream, downstream, pr_metadata, config, dict(os.environ), accept_similar,
    )  # fmt: skip
    result = carry(request)
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            render_carry(result)
    ci.emit_result(result)
    return result.exit_code


def _mode(**flags: bool) -> CarryMode:
    """--continue, --skip, --abort or --status (at most one of them), else a new carry."""
    from vimesync.app.carry import CarryMode

    modes = [CarryMode(f"--{name.rstrip('_')}") for name, on in flags.items() if on]
    if len(modes) > 1:
        raise BadInput(f"{' and '.join(m.value for m in modes)}: give one of them")
    return modes[0] if modes else CarryMode.START
