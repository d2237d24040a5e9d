"""Carrying upstream PRs into a sync branch (``carry``), and the modes of ``carry`` and ``sync``
in progress."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

PrOpt = Annotated[
    list[int] | None,
    typer.Option(
        "--pr",
        metavar="N",
        min=1,
        help="Carry only these upstream PRs, by number (repeatable).",
    ),
]

BranchOpt = Annotated[
    str | None,
    typer.Option("--branch", metavar="NAME", help="The new sync branch (default: sync/<tip8>)."),
]
OntoOpt = Annotated[str, typer.Option("--onto", metavar="REV", help="Start the sync branch here.")]
WorktreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--worktree",
        metavar="PATH",
        help="Folder of the sync branch's linked worktree (default: <checkout>.<branch> beside it).",
    ),
]
SquashOpt = Annotated[bool, typer.Option("--squash", help="One commit for every carried PR.")]
DirectOpt = Annotated[
    str,
    typer.Option(
        "--direct", metavar="skip|include", help="Direct pushes (no PR): skip them or carry them too."
    ),
]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print the plan and change nothing.")]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", help="Go on after the conflict was resolved and git added.")
]
SkipOpt = Annotated[bool, typer.Option("--skip", help="Leave out the conflicting PR (recorded) and go on.")]
AbortOpt = Annotated[
    bool, typer.Option("--abort", help="Remove the sync branch, its worktree and the carry's state.")
]
StatusOpt = Annotated[bool, typer.Option("--status", help="Say where the carry in progress stands.")]
SyncContinueOpt = Annotated[
    bool,
    typer.Option("--continue", help="Go on from the step the sync stopped at (done steps are not redone)."),
]
SyncAbortOpt = Annotated[
    bool,
    typer.Option("--abort", help="Forget the sync's state (and abort the carry in progress, if any)."),
]
SyncStatusOpt = Annotated[
    bool, typer.Option("--status", help="Say which steps of the sync are done, with their figures.")
]

# vimesync bot: the fork on GitHub, where it pushes, and the default branch it syncs.
BotRepoOpt = Annotated[
    str | None,
    typer.Option(
        "--repo", metavar="OWNER/NAME", help="The fork on GitHub (default: the job's GITHUB_REPOSITORY)."
    ),
]
RemoteOpt = Annotated[
    str, typer.Option("--remote", metavar="NAME", help="The git remote the sync branch is pushed to.")
]
BaseOpt = Annotated[
    str | None,
    typer.Option("--base", metavar="BRANCH", help="The default branch (default: the one checked out)."),
]
BotDryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the plan; sync, push and write nothing.")
]
