"""``vimesync carry``: bring the applicable upstream PRs into a new sync branch.

Exit codes: 0 carried (or nothing to carry, or a plan printed); 1 stopped at a conflict (the
worktree is in git's conflict state; resolve, ``git add``, ``--continue``), or ``--continue`` with
files still unresolved; 2 bad input; 130 (SIGINT) or 143 (SIGTERM) stopped by a signal once the
carry began: one line, ``interrupted: `vimesync carry --continue` resumes`` (with ``--json``, an
error document saying so), and ``--continue`` goes on from where the branch is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT, SYNC
from vimesync.cli.ownoptions import CARRY, CARRY_MODE

if TYPE_CHECKING:
    from vimesync.app.carry import CarryMode
    from vimesync.app.flags import OutputFlags, SyncFlags
    from vimesync.app.workspace import DownstreamDefault
    from vimesync.carry.run import CarryOptions
    from vimesync.settings import Settings


def carry_command(
    settings: Settings,
    sync: SyncFlags = SYNC.take(
        "range_", "policy", "upstream", "downstream", "pr_metadata", "accept_similar", "config"
    ),
    options: CarryOptions = CARRY,
    mode: CarryMode = CARRY_MODE,
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Carry the applicable upstream PRs into a new sync branch (path map, translations, 3-way merge)."""
    from vimesync.app.carry import CarryMode, CarryRequest, carry
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.carry import render_carry

    emit = Emit(out, settings)
    # A carry in progress belongs to the repository it runs in (its worktree included).
    where: DownstreamDefault = "cwd" if mode is CarryMode.START else "here"
    with Workspace.resolve(sync, settings, downstream=where, engines=False) as ws:
        request = CarryRequest(mode=mode, options=options)
        return emit.result(carry(ws, request, progress=emit.progress()), render_carry)
