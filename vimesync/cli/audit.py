"""``vimesync audit``: classify every path a sync changed; ``vimesync audit review``: record reviews.

Exit codes: 0 every changed path is identical to upstream or reviewed at its head content,
1 some path is unreviewed or its review is stale, 2 bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from vimesync.cli.groups import OUTPUT, SYNC
from vimesync.cli.options import AllUnreviewedOpt, ByOpt, ReviewPathsArg
from vimesync.errors import EXIT_OK, BadInput

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags, SyncFlags
    from vimesync.settings import Settings


def _given(ctx: typer.Context) -> list[str]:
    """The options given on the command line (or by environment), as the user spelled them."""
    given = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given.append(param.opts[0])
    return given


def audit(
    ctx: typer.Context,
    settings: Settings,
    sync: SyncFlags = SYNC.take(
        "downstream",
        "baseline",
        "head",
        "upstream",
        "upstream_tip",
        "upstream_base",
        "path_map",
        "policy",
        "sync",
        "config",
    ),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Classify every path changed between --baseline and --head: identical, translated, downstream-only,
    deleted, excluded; report unreviewed paths and stale reviews."""
    if ctx.invoked_subcommand is not None:
        # `vimesync audit --sync X review ...`: the check's options do not reach the subcommand;
        # refused rather than silently dropped.
        given = _given(ctx)
        if given:
            raise BadInput(
                f"{', '.join(given)} before {ctx.invoked_subcommand!r} would not apply to it",
                hint=f"put them after it: vimesync audit {ctx.invoked_subcommand} ... [OPTIONS]",
            )
        return EXIT_OK
    from vimesync.app.audit import audit_sync
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.audit import render_audit

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, reading="head", baseline="sync") as ws:
        return emit.result(audit_sync(ws, progress=emit.progress()), render_audit)


def review(
    settings: Settings,
    by: ByOpt,
    paths: ReviewPathsArg = None,
    all_unreviewed: AllUnreviewedOpt = False,
    sync: SyncFlags = SYNC.take(
        "sync", "downstream", "baseline", "head", "upstream", "upstream_tip", "upstream_base", "config"
    ),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Record that NAME reviewed PATH... (or, with --all-unreviewed, every path the audit lists as
    unreviewed or stale) at their content in --head, in sop/reviews/<sync>.toml."""
    from vimesync.app.audit import ReviewRequest, review_paths
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.audit import render_review

    emit = Emit(out, settings)
    if sync.sync is not None:
        # They only name the ledger: with --sync naming it, they would have nothing to do.
        named = (("--upstream", sync.upstream), ("--upstream-tip", sync.upstream_tip))
        unused = [
            flag for flag, value in (*named, ("--upstream-base", sync.upstream_base)) if value is not None
        ]
        if unused:
            raise BadInput(
                f"{', '.join(unused)} only {'names' if len(unused) == 1 else 'name'} the ledger,"
                " which --sync already names",
                hint="give either --sync NAME or the upstream options",
            )
    with Workspace.resolve(sync, settings, reading="head", baseline="required") as ws:
        request = ReviewRequest(tuple(paths or ()), by, all_unreviewed)
        return emit.result(review_paths(ws, request), render_review)
