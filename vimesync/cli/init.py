"""``vimesync init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.cli import output
from vimesync.cli.options import (
    DownstreamOpt,
    EngineOpt,
    EngineRepoOpt,
    ForceOpt,
    FormatOpt,
    JsonOpt,
    MapOpt,
    RevOpt,
    SourceOpt,
    UpstreamLocationOpt,
    UpstreamRepoOpt,
    output_format,
)
from vimesync.errors import EXIT_OK, BadInput


def init(
    upstream: UpstreamLocationOpt = None,
    upstream_repo: UpstreamRepoOpt = None,
    map_: MapOpt = None,
    engine: EngineOpt = None,
    engine_repo: EngineRepoOpt = None,
    rev: RevOpt = None,
    source: SourceOpt = None,
    downstream: DownstreamOpt = None,
    force: ForceOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
) -> int:
    """Write vimesync.toml, the upstream and engine pins, patches/series, sop/policy.toml and
    sop/SYNC.md (each with commented examples), then print the next three commands."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.repopaths import work_tree_of
    from vimesync.safefs import check_output_path, lexical, write_atomic
    from vimesync.scaffold.plan import InitOptions, plan_init

    as_json = output_format(fmt, json_) == "json"
    cwd = lexical(Path.cwd())
    root = lexical(downstream) if downstream is not None else (work_tree_of(cwd) or cwd)
    if not root.is_dir():
        raise BadInput(f"--downstream {root}: not a folder")
    plan = plan_init(
        InitOptions(
            downstream=root,
            upstream=upstream,
            upstream_repo=upstream_repo,
            maps=tuple(map_ or ()),
            engine=engine,
            engine_repo=engine_repo,
            rev=rev,
            source=source,
        )
    )
    existing = [name for name, _ in plan.files if os.path.lexists(root / name)]
    if existing and not force:
        raise BadInput(
            f"{root}: {', '.join(existing)} already {'exists' if len(existing) == 1 else 'exist'}; "
            "nothing written",
            hint="pass --force to overwrite them",
        )
    # Every target checked before the first is written (no symlink at it or on the way): a refusal
    # leaves nothing half done.
    for name, _ in plan.files:
        if os.path.lexists((root / name).parent):
            check_output_path(root / name, root=root, what="init")
    for name, text in plan.files:
        write_atomic(root / name, text.encode("utf-8"), root=root, mkdirs=True, what="init")
    if as_json:
        output.emit_json(
            {
                "ok": True,
                "root": str(root),
                "written": [name for name, _ in plan.files],
                "notes": list(plan.notes),
                "next": list(plan.next_commands),
            }
        )
        return EXIT_OK
    for name, _ in plan.files:
        output.out(f"wrote {root / name}")
    for note in plan.notes:
        output.stdout.print(output.styled(("note: ", "dim"), note))
    output.out("\nNext:")
    for i, command in enumerate(plan.next_commands, 1):
        output.out(f"  {i}. {command}")
    output.out("Every key is documented in docs/config.md; `vimesync <command> -h` lists the flags.")
    return EXIT_OK
