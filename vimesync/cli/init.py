"""``vimesync init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from vimesync.cli import output
from vimesync.cli.app import app
from vimesync.errors import EXIT_OK, BadInput


@app.command("init")
def init(
    upstream: Annotated[
        str | None,
        typer.Option(
            metavar="PATH|URL", help="The upstream: a local clone or bare mirror (PATH), or its URL."
        ),
    ] = None,
    upstream_repo: Annotated[
        str | None,
        typer.Option(metavar="OWNER/NAME", help="Upstream owner/name (default: the clone's origin remote)."),
    ] = None,
    map_: Annotated[
        list[str] | None,
        typer.Option("--map", metavar="SRC=DST", help="Path map SRC=DST (upstream=downstream), repeatable."),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Engine display name, e.g. SGLang (its pin: pins/<name>.toml)."),
    ] = None,
    engine_repo: Annotated[
        str | None, typer.Option(metavar="OWNER/NAME", help="Engine owner/name, e.g. sgl-project/sglang.")
    ] = None,
    rev: Annotated[
        str | None,
        typer.Option(
            metavar="SHA", help="Engine commit (full sha; resolved in --source when it is a clone)."
        ),
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH", help="Engine source on this machine: clone, mirror, folder, wheel, sdist."
        ),
    ] = None,
    downstream: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="Where to write (default: the root of the repository here)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
) -> int:
    """Write vimesync.toml, the upstream and engine pins, patches/series, sop/policy.toml and
    sop/SYNC.md (each with commented examples), then print the next three commands."""
    from vimesync.repopaths import work_tree_of
    from vimesync.safefs import lexical, write_atomic
    from vimesync.scaffold.plan import InitOptions, plan_init

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
    for name, text in plan.files:
        write_atomic(root / name, text.encode("utf-8"), root=root, mkdirs=True, what="init")
    if json_out:
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
    output.out("Every key is documented in docs/config.md; `vimesync <command> --help` lists the flags.")
    return EXIT_OK
