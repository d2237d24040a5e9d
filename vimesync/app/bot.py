"""``vimesync bot``: one scheduled run of the sync bot (issue 32). It observes (the upstream tip
against the default branch's pin, the bot's open PR and where the bot last pushed its branch),
plans (:func:`vimesync.bot.plan.plan`, pure), then performs: the sync is ``vimesync sync``'s own
use case in a worktree of a scratch folder, the push goes through :func:`vimesync.git.push` with a
lease, and every GitHub read and write through :class:`vimesync.github.GitHubClient`, each write
only when what it would write differs from what it read.
"""

from __future__ import annotations

from pathlib import Path

from vimesync import git
from vimesync.app import syncstate
from vimesync.app.botresult import BotRequest, BotResult
from vimesync.app.workspace import Workspace
from vimesync.bot.plan import plan
from vimesync.errors import BadInput
from vimesync.github import GitHubClient, is_repo_name

__all__ = ["BotRequest", "BotResult", "run_bot"]


def run_bot(ws: Workspace, request: BotRequest) -> BotResult:
    """Observe, plan, then (unless a dry run) perform."""
    from vimesync.app.botobserve import observe
    from vimesync.app.botperform import perform, report_blind
    from vimesync.carry.gitops import main_repository

    repo = request.repo or ws.settings.job_repository
    if not repo or not is_repo_name(repo):
        raise BadInput(
            "vimesync bot needs the fork's repository as owner/name",
            hint="pass --repo OWNER/NAME (GitHub Actions sets GITHUB_REPOSITORY)",
        )
    if not request.dry_run and not ws.settings.github.token:
        raise BadInput("vimesync bot needs a GitHub token", hint="set GITHUB_TOKEN (or GH_TOKEN) in the job")
    checkout = ws.require_downstream()
    base = _base_branch(checkout, request.base)
    client = GitHubClient(repo, ws.settings.github)
    try:
        seen = observe(ws, client, base, request.remote)
        if seen.blind is not None:
            if not request.dry_run:
                report_blind(ws, client, seen, seen.blind)
            raise seen.blind  # exit 2, as the walk says it; the dashboard already shows it
        the_plan = plan(seen.observed)
        if request.dry_run:
            return BotResult(seen.observed, the_plan, dry_run=True)
        if the_plan.syncs and syncstate.exists(main_repository(checkout)):
            raise BadInput(
                "a vimesync sync is in progress in this checkout: the bot runs on a clean one",
                hint="vimesync sync --abort, or run the bot on a fresh checkout",
            )
        return perform(ws, client, request.remote, seen, the_plan)
    finally:
        client.close()


def _base_branch(checkout: Path, given: str | None) -> str:
    """The default branch: the one checked out, which ``--base`` must name when given."""
    out = git.run(checkout, ["symbolic-ref", "-q", "--short", "HEAD"], check=False).decode().strip()
    if not out:
        raise BadInput("the checkout is not on a branch: the bot runs on the default branch")
    if given is not None and given != out:
        raise BadInput(f"--base {given!r}: the checkout is on {out!r}", hint=f"git switch {given} first")
    return out
