"""``init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

import os
import re
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
    old_pins = _old_pins(root, {name for name, _ in plan.files}) if r.force else []
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
    notes = list(plan.notes)
    for name in old_pins:
        os.unlink(root / name)  # checked above: a regular file init wrote, reached without a symlink
        notes.append(f"removed {name}: the pin an earlier init wrote, which vimesync.toml no longer names")
    notes.append(_ignore_scratch(root))
    names = tuple(name for name, _ in plan.files)
    return InitOutcome(root, names, tuple(notes), tuple(plan.next_commands))


SCRATCH = ".vimesync/"  # vimesync's folder in a checkout (the sync report, a bump's state): never committed
_IGNORED = {".vimesync", ".vimesync/", "/.vimesync", "/.vimesync/"}
# The first line of each pin init writes (scaffold/templates.py): what marks a pin as init's own.
_PIN_HEADERS = (
    "# The last upstream commit carried into this downstream",
    "# The exact engine source the patch stack",
)
MAX_GITIGNORE = 1 << 20


def _ignore_scratch(root: Path) -> str:
    """``.vimesync/`` added to the checkout's .gitignore (created, or appended to; once), never
    through a symlink: one line saying what was done."""
    from vimesync.errors import ConfigError
    from vimesync.safefs import read_input, write_atomic

    path = root / ".gitignore"
    try:  # a symlink (dangling or not), a folder, a file past the limit: refused, left alone
        old = (
            read_input(path, max_bytes=MAX_GITIGNORE, root=root, what=".gitignore")
            if os.path.lexists(path)
            else b""
        )
    except ConfigError as exc:
        return f"{exc}: add {SCRATCH} to .gitignore by hand"
    lines = old.decode("utf-8", "replace").splitlines()
    if any(line.strip() in _IGNORED for line in lines):
        return f".gitignore already ignores {SCRATCH}"
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    try:
        write_atomic(path, old + sep + SCRATCH.encode() + b"\n", root=root, what=".gitignore")
    except ConfigError as exc:
        return f"{exc}: add {SCRATCH} to .gitignore by hand"
    return f"{SCRATCH} added to .gitignore: the sync report and vimesync's own files are never committed"


def _old_pins(root: Path, new: set[str]) -> list[str]:
    """The pins the config init is replacing names that init wrote and no longer writes: a
    regular file under pins/ (reached without a symlink) whose first line is init's own."""
    from vimesync.errors import VimesyncError
    from vimesync.safefs import loads_toml, read_input, read_text_input

    try:
        doc = loads_toml(read_text_input(root / "vimesync.toml", root=root), where="vimesync.toml")
    except VimesyncError:
        return []
    named = []
    for table in ("upstream", "engine"):
        section = doc.get(table)
        pin = section.get("pin") if isinstance(section, dict) else None
        if isinstance(pin, str) and len(pin) < 256 and re.fullmatch(r"pins/[A-Za-z0-9._-]+\.toml", pin):
            named.append(pin)
    old = []
    for pin in sorted(set(named) - new):
        try:
            head = read_input(root / pin, max_bytes=1 << 16, root=root, what="pin")
        except VimesyncError:
            continue
        if head.decode("utf-8", "replace").startswith(_PIN_HEADERS):
            old.append(pin)
    return old
