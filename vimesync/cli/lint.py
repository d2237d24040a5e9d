"""``vimesync patches lint``, ``patches describe`` and ``patches refresh``: the stack's headers and
files, a patch's DEP-3 header set in place, a conflicting patch re-made from edited files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import ENGINE, OUTPUT, SYNC
from vimesync.cli.options import FromOpt, IgnoreOpt, PatchNameArg, SelectOpt
from vimesync.cli.ownoptions import DESCRIBE

if TYPE_CHECKING:
    from vimesync.app.flags import EngineFlags, OutputFlags, SyncFlags
    from vimesync.app.lint import DescribeRequest
    from vimesync.settings import Settings


def lint(
    settings: Settings,
    engine: EngineFlags = ENGINE.take("series", "engine", "strip", "strict", "source", "rev"),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
) -> int:
    """Check the series against its folder and every patch's header, line endings and index lines
    (codes in docs/lint.md). Exit 1 on findings."""
    from vimesync.app.lint import LintCodes
    from vimesync.app.lint import lint as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.lint import render_lint

    emit = Emit(out, settings)
    codes = LintCodes(select=tuple(select or ()), ignore=tuple(ignore or ()))
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        return emit.result(run(ws, engine, codes), render_lint)


def describe(
    settings: Settings,
    request: DescribeRequest = DESCRIBE,
    engine: EngineFlags = ENGINE.take("series", "engine"),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """NAME (the patch, as the series names it): add or update its DEP-3 header in place (the
    diff is kept byte for byte; git apply ignores the header), so the report's Purpose / PR
    column is filled."""
    from vimesync.app.lint import describe as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.lint import render_describe

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        return emit.result(run(ws, engine, request), render_describe)


def refresh(
    settings: Settings,
    name: PatchNameArg,
    from_: FromOpt = None,
    engine: EngineFlags = ENGINE.take("series", "engine", "source", "rev"),
    sync: SyncFlags = SYNC.take("config"),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """NAME (the patch, as the series names it): re-make it from the merged files you edited in
    the work folder `pin bump --refresh` left (conflict markers resolved), against the new pin;
    written when it then applies there with no offset. Then run the bump again. The new pin is
    the one the work folder's bump.json names, or --source (and --rev) when given."""
    from vimesync.app.refresh import RefreshRequest
    from vimesync.app.refresh import refresh as run
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.refresh import render_refresh

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, downstream="none") as ws:
        return emit.result(run(ws, engine, RefreshRequest(name=name, folder=from_)), render_refresh)
