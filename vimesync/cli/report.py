"""``vimesync report``: the sync PR description, every figure computed.

Runs the upstream walk, the patch-stack check and the changed-path audit (each only when its
inputs are given: flags win over vimesync.toml and the pins), then renders markdown or JSON to
stdout or ``--output``, and with ``--publish owner/repo#N`` puts it into that PR's description.

Exit codes: 0 the report was generated and every gate it covers (classified, carried, patches,
audit, tests, ci) was evaluated and holds; 1 the report was generated (and written/published) but
a gate failed (an applicable PR of the range is not carried, a patch does not apply, a patched
Python file does not parse, a changed path is unreviewed or stale, a required suite is not
recorded green, exact-head CI is not green) or was
not checked (no upstream, no source, no baseline, no token, no suite required) and not switched
off in sop/gates.toml or with ``--skip-gate``; 2 bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import CI, ENGINE, OUTPUT, SYNC

if TYPE_CHECKING:
    from vimesync.app.flags import CiFlags, EngineFlags, OutputFlags, SyncFlags
    from vimesync.settings import Settings


def report(
    settings: Settings,
    sync: SyncFlags = SYNC.take(
        "upstream",
        "range_",
        "upstream_repo",
        "policy",
        "downstream",
        "baseline",
        "head",
        "path_map",
        "sync",
        "pr_metadata",
        "github",
        "config",
    ),
    engine: EngineFlags = ENGINE.take("engine", "source", "rev", "series", "strip", "python", "keep_going"),
    ci: CiFlags = CI.take("repo", "pr", "require", "skip_gate"),
    out: OutputFlags = OUTPUT.take(
        "format", "json", "output", "publish", "junit", "annotations", format="DocFormatOpt"
    ),
) -> int:
    """Write the sync PR description: summary, engine patches, final audit, validation and gates."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.report import ReportRequest, make_report, publish_report, refuse_early
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.report import render_published, show_report

    emit = Emit(out, settings, json_stdout=out.as_json and out.output is None)
    refuse_early(out.publish, out.output, settings.github)
    request = ReportRequest(engine=engine, ci=ci, publish=out.publish)
    with Workspace.resolve(sync, settings, reading="head", baseline="sync") as ws:
        result = make_report(ws, request, progress=emit.progress())
    code = emit.result(result, lambda r: show_report(r, out))
    if out.publish is not None:
        render_published(publish_report(out.publish, result, settings.github))
    return code
