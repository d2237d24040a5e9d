"""``vimesync sync``: walk, carry, patches check, audit, sop status and report in one run, from
the downstream checkout, stopping only where a human must decide (issue 22).

Each step is the use case of its own command (:mod:`vimesync.app.syncsteps`), run by
:class:`vimesync.app.syncrun.SyncRun`; what is done is recorded after each step in the git
directory (:mod:`vimesync.app.syncstate`), so ``--continue`` (after a conflict was resolved, a
patch refreshed, paths reviewed, or CI finished) redoes no finished step, and a sync killed
between two steps goes on from the next one. A step that judged the head (patches, audit,
status, report) is redone when the sync branch has moved since.
"""

from __future__ import annotations

import signal

from vimesync.app import syncstate
from vimesync.app.progress import Progress, no_progress
from vimesync.app.syncresult import (
    OnStep,
    SyncAbortResult,
    SyncMode,
    SyncResult,
    SyncRunRequest,
    SyncStatusResult,
)
from vimesync.app.syncsteps import CONTINUE
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput, Interrupted, Terminated

INTERRUPTED = f"interrupted: `{CONTINUE}` resumes"


def sync(
    ws: Workspace, request: SyncRunRequest, *, on_step: OnStep | None = None, progress: Progress = no_progress
) -> SyncResult | SyncStatusResult | SyncAbortResult:
    """Run (or go on with, show, drop) the sync of this downstream."""
    from vimesync.app.syncrun import SyncRun
    from vimesync.carry import gitops

    r = request
    checkout = gitops.main_repository(ws.require_downstream())
    if r.mode is SyncMode.STATUS:
        return SyncStatusResult(syncstate.load(checkout) if syncstate.exists(checkout) else None)
    if r.mode is SyncMode.ABORT:
        from vimesync.app.syncabort import abort

        return abort(ws, checkout)
    if r.mode is SyncMode.CONTINUE and (given := r.started_with(ws)):
        raise BadInput(f"{', '.join(given)}: not used by --continue (the sync in progress has its own)")
    run = SyncRun(r, ws, checkout, on_step or (lambda step: None), progress)
    try:
        return run.go()
    except (KeyboardInterrupt, Terminated, Interrupted) as exc:
        if not syncstate.exists(checkout):
            raise
        if isinstance(exc, Interrupted):
            signum = exc.exit_code - 128
        else:
            signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        raise Interrupted(INTERRUPTED, signum=signum) from None
