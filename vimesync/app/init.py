"""``init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document
from vimesync.errors import EXIT_OK, BadInput


@dataclass(frozen=True)
class InitRequest:
    """What the flags say (None: not given)."""

    upstream: str | None = None  # a path or a URL, as typed
    upstream_repo: str | None = None
    maps: tuple[str, ...] = ()
    engine: str | None = None
    engine_repo: str | None = None
    rev: str | None = None
    source: Path | None = None
    downstream: Path | None = None
    force: bool = False


@dataclass(frozen=True)
class InitOutcome:
    root: Path
    written: tuple[str, ...]  # relative to root, in the order written
    advice: tuple[str, ...]  # what to know about the files written (shown with them)
    next_commands: tuple[str, ...]
    kind: Kind = Kind.INIT
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {
            "root": str(self.root),
            "written": list(self.written),
            "notes": list(self.advice),
            "next": list(self.next_commands),
        }
        return document(self.kind, self.exit_code, body)


def init(request: InitRequest) -> InitOutcome:
    """Plan the files, refuse to overwrite any without ``force``, check every target, write them."""
    from vimesync.repopaths import work_tree_of
    from vimesync.safefs import check_output_path, lexical, write_atomic
    from vimesync.scaffold.plan import InitOptions, plan_init

    r = request
    cwd = lexical(Path.cwd())
    root = lexical(r.downstream) if r.downstream is not None else (work_tree_of(cwd) or cwd)
    if not root.is_dir():
        raise BadInput(f"--downstream {root}: not a folder")
    plan = plan_init(
        InitOptions(
            downstream=root,
            upstream=r.upstream,
            upstream_repo=r.upstream_repo,
            maps=r.maps,
            engine=r.engine,
            engine_repo=r.engine_repo,
            rev=r.rev,
            source=r.source,
        )
    )
    existing = [name for name, _ in plan.files if os.path.lexists(root / name)]
    if existing and not r.force:
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
    names = tuple(name for name, _ in plan.files)
    return InitOutcome(root, names, tuple(plan.notes), tuple(plan.next_commands))
