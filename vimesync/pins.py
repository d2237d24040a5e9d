"""Pin files as committed at a revision of the downstream (the pins before the sync began)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.errors import ConfigError
from vimesync.safefs import loads_toml


def _toml_at(repo: Path, rev: str, file: Path | None) -> dict[str, Any] | None:
    """A TOML file of ``repo`` as committed at ``rev`` (None when absent or outside the repo)."""
    if file is None:
        return None
    try:
        rel = file.resolve().relative_to(repo.resolve()).as_posix()
        entries = git.ls_tree(repo, rev, [rel])
    except (ValueError, git.GitError):
        return None
    if len(entries) != 1 or entries[0].kind != "blob":
        return None
    with git.CatFile(repo) as cat:
        data = cat.read(entries[0].oid)
    try:
        return loads_toml(data.decode("utf-8"), where=rel)  # bounded nesting and integers
    except (UnicodeDecodeError, ConfigError):
        return None


def pinned_at(repo: Path, rev: str, pin_file: Path | None, table: str, key: str) -> str | None:
    """``[table] key`` of a pin file as it was at ``rev`` (e.g. the engine rev before the sync)."""
    data = _toml_at(repo, rev, pin_file)
    value = (data or {}).get(table, {}).get(key)
    return value if isinstance(value, str) else None
