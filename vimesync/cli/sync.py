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
from vimesync.cli.ownoptions import CARRY, SYNC_MODE

if TYPE_CHECKING:
    from vimesync.app.flags import CiFlags, EngineFlags, OutputFlags, SyncFlags
    from vimesync.app.syncresult import SyncMode
    from vimesync.carry.run import CarryOptions
    from vimesync.settings import Settings


def sync_command(
    settings: Settings,
    sync: SyncFlags = SYNC.take("range_", "baseline", "upstream", "downstream", "config"),
    carry: CarryOptions = CARRY.take("prs", "direct", "squash", "onto", "branch", "worktree"),
    engine: EngineFlags = ENGINE.take("engine", "source", "rev"),
    ci: CiFlags = CI.take("skip_gate", "repo", "pr"),
    mode: SyncMode = SYNC_MODE,
    out: OutputFlags = OUTPUT.take(
        "format", "json", "junit", "annotations", "publish", "output", output="SyncOutputOpt"
    ),
) -> int:
    """Sync in one run: walk, carry, patches check, audit, sop status, report; stop at a decision."""
    from vimesync.app.sync import sync as run
    from vimesync.app.syncresult import SyncRunRequest
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.sync import render_step, render_sync

    emit = Emit(out, settings, json_stdout=out.as_json)
    request = SyncRunRequest(mode=mode, carry=carry, engine=engine, ci=ci, output=out)
    with Workspace.resolve(sync, settings, engines=False) as ws:
        result = run(ws, request, on_step=None if out.as_json else render_step, progress=emit.progress())
    return emit.result(result, render_sync)
