"""The state of the engine PRs each patch's header names, for the report's Engine patches table:
merged (and whether the pin holds the merge), open or closed, asked of GitHub as ``pin radar``
asks (:func:`vimesync.report.radar.scan_patches`: one GET per PR through the ETag cache), at
most :data:`MAX_ASKED` PRs per report. Without a token, or when GitHub cannot be reached, the
table says "not checked" and why, once under it (:data:`LOOKUP_FAILED` after a failed lookup):
never an error."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.app.workspace import Workspace
from vimesync.check.model import CheckReport
from vimesync.report.model import EnginePatches, Skipped

if TYPE_CHECKING:
    from vimesync.github import PullState
    from vimesync.report.radar import GitPin

MAX_ASKED = 50  # PRs asked about for one report (pin radar asks up to 200)
NO_TOKEN = "no GITHUB_TOKEN or GH_TOKEN in the environment"
# Said once under the table (the rows each read "not checked"), never GitHub's words: after a
# failure other than a 404 nothing more is asked (an unreachable or refusing GitHub, once).
LOOKUP_FAILED = "a GitHub lookup failed, not with a 404, and the PRs after it were not asked about"


def with_upstream_state(
    ws: Workspace,
    table: EnginePatches | Skipped,
    check: CheckReport | Skipped,
    *,
    git_pin: GitPin | None = None,
) -> EnginePatches | Skipped:
    """``table`` with each row's engine PRs' state (``PatchRow.upstream``), or the reason they
    were not checked (``upstream_not_checked``); unchanged when no header names one. The pin the
    merges are placed against is the checked source's, else ``git_pin`` (the bot's dashboard)."""
    from vimesync.errors import GitHubError, VimesyncError
    from vimesync.report.radar import engine_refs, scan_patches

    if isinstance(table, Skipped) or not table.repo:
        return table
    refs = [(row.name, engine_refs(row.refs, table.repo)) for row in table.rows]
    if not any(r for _, r in refs):
        return table
    if ws.settings.github.token is None:
        return replace(table, upstream_not_checked=NO_TOKEN)
    from vimesync.github import GitHubClient, is_repo_name

    if not is_repo_name(table.repo):
        return replace(table, upstream_not_checked=f"{table.repo[:100]!r} is not a GitHub owner/name")
    try:
        client = GitHubClient(table.repo, ws.settings.github)
    except VimesyncError as exc:  # a bad API root or cache folder: said, never an error here
        return replace(table, upstream_not_checked=exc.message)
    failed: list[int] = []

    def ask(number: int) -> PullState:
        try:
            return client.pull_state(number)
        except GitHubError as exc:  # after one failure but a 404, scan_patches asks nothing more
            if "(404)" not in exc.message:
                failed.append(number)
            raise

    try:
        found = scan_patches(refs, ask=ask, pin=_git_pin(check) or git_pin, max_asked=MAX_ASKED)
    finally:
        client.close()
    rows = tuple(replace(row, upstream=f.refs) for row, f in zip(table.rows, found, strict=True))
    return replace(table, rows=rows, upstream_not_checked=LOOKUP_FAILED if failed else None)


def _git_pin(check: CheckReport | Skipped) -> GitPin | None:
    """The checked source as a git pin (its repository and the commit checked), else None: then
    whether the pin holds a merge is not known."""
    from vimesync import git
    from vimesync.report.radar import GitPin

    if isinstance(check, Skipped) or check.source.kind != "git" or not check.source.rev:
        return None
    path = Path(check.source.path)
    return GitPin(path, check.source.rev) if git.repo_at(path) is not None else None
