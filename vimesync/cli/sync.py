"""``vimesync sync``: walk, carry, patches check, audit, sop status and report in one run, from
the downstream checkout; it stops only at a decision a human must make, and says which and how to
move on (``--continue`` after it). State in the git directory: ``--status`` shows it, ``--abort``
drops it.

Exit codes: 0 every gate holds (the report written), or up to date; 1 stopped at a decision; 2
bad input; 130 (SIGINT) or 143 (SIGTERM) stopped by a signal: ``vimesync sync --continue`` resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import CI, ENGINE, OUTPUT, SYNC
from vimesync.cli.options import (
    BranchOpt,
    DirectOpt,
    OntoOpt,
    PrOpt,
    SquashOpt,
    SyncAbortOpt,
    SyncContinueOpt,
    SyncStatusOpt,
    WorktreeOpt,
)
from vimesync.errors import BadInput

if TYPE_CHECKING:
    from vimesync.app.flags import CiFlags, EngineFlags, OutputFlags, SyncFlags
    from vimesync.settings import Settings


def sync_command(
    settings: Settings,
    sync: SyncFlags = SYNC.take("range_", "baseline", "upstream", "downstream", "config"),
    pr: PrOpt = None,
    direct: DirectOpt = "skip",
    squash: SquashOpt = False,
    onto: OntoOpt = "HEAD",
    branch: BranchOpt = None,
    worktree: WorktreeOpt = None,
    engine: EngineFlags = ENGINE.take("engine", "source", "rev"),
    ci: CiFlags = CI.take("skip_gate", "repo", "pr"),
    continue_: SyncContinueOpt = False,
    abort: SyncAbortOpt = False,
    status: SyncStatusOpt = False,
    out: OutputFlags = OUTPUT.take(
        "format", "json", "junit", "annotations", "publish", "output", output="SyncOutputOpt"
    ),
) -> int:
    """Sync in one run: walk, carry, patches check, audit, sop status, report; stop at a decision."""
    from vimesync.app.sync import sync as run
    from vimesync.app.syncresult import SyncMode, SyncRunRequest
    from vimesync.app.workspace import Workspace
    from vimesync.carry.run import CarryOptions
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.sync import render_step, render_sync

    emit = Emit(out, settings, json_stdout=out.as_json)
    given = ((SyncMode.CONTINUE, continue_), (SyncMode.ABORT, abort), (SyncMode.STATUS, status))
    modes = [m for m, on in given if on]
    if len(modes) > 1:
        raise BadInput(f"{' and '.join(m.value for m in modes)}: give one of them")
    carry = CarryOptions(
        prs=tuple(pr or ()), direct=direct, squash=squash, onto=onto, branch=branch, worktree=worktree
    )
    request = SyncRunRequest(
        modes[0] if modes else SyncMode.START, carry=carry, engine=engine, ci=ci, output=out
    )
    with Workspace.resolve(sync, settings, engines=False) as ws:
        result = run(ws, request, on_step=None if out.as_json else render_step)
    return emit.result(result, render_sync)
