"""``vimesync bot``: one scheduled run of the sync bot (issue 32), from a checkout of the fork's
default branch (the job fetched the upstream): keeps one sync PR open and current, and one
dashboard issue showing what is pending.

Exit codes: 0 the PR and the dashboard show the state (even when the sync stopped at a decision);
1 the bot could not do its job because of the repository's state (a lease refused: someone pushed
meanwhile); 2 bad input or configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT, SYNC
from vimesync.cli.options import BaseOpt, BotDryRunOpt, BotRepoOpt, RemoteOpt

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags, SyncFlags
    from vimesync.settings import Settings


def bot_command(
    settings: Settings,
    repo: BotRepoOpt = None,
    remote: RemoteOpt = "origin",
    base: BaseOpt = None,
    dry_run: BotDryRunOpt = False,
    sync: SyncFlags = SYNC.take("config", "upstream", "downstream"),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Keep one sync PR open and current and one dashboard issue (a scheduled job runs it)."""
    from vimesync.app.bot import BotRequest, run_bot
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.bot import render_bot

    emit = Emit(out, settings)
    request = BotRequest(repo=repo, remote=remote, base=base, dry_run=dry_run)
    with Workspace.resolve(sync, settings, engines=False) as ws:
        result = run_bot(ws, request)
    return emit.result(result, render_bot)
