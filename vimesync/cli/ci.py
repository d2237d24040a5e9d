"""``vimesync ci``: the exact-head CI verdict of one commit (or a pull request's head)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import CI, OUTPUT, SYNC
from vimesync.cli.options import HeadPrOpt
from vimesync.errors import BadInput

if TYPE_CHECKING:
    from vimesync.app.flags import CiFlags, OutputFlags, SyncFlags
    from vimesync.settings import Settings


def ci(
    settings: Settings,
    flags: CiFlags = CI.take("repo", "sha", "require", repo="RepoOpt", sha="CiShaOpt"),
    pr: HeadPrOpt = None,
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Read the combined status and check runs of exactly one commit and give one verdict:
    green, pending, failing or missing (a required context never reported). With --pr, results
    on the PR's earlier commits are listed as not evidence for its head. Exit 0 green, 1 not."""
    from dataclasses import replace

    from vimesync.app.ci import ci as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.ci import render_ci

    emit = Emit(out, settings)
    if pr is not None and len(pr) > 1:
        raise BadInput("ci reads one PR's head: pass --pr N once")
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        return emit.result(run(ws, replace(flags, pr=pr[0] if pr else None)), render_ci)
