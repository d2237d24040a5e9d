"""Pin files as committed at a revision of the downstream (the pins before the sync began)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.errors import ConfigError
from vimesync.safefs import lexical, loads_toml


def _toml_at(repo: Path, rev: str, file: Path | None) -> dict[str, Any] | None:
    """A TOML file of ``repo`` as committed at ``rev`` (None when absent or outside the repo)."""
    if file is None:
        return None
    try:
        rel = file.resolve().relative_to(repo.resolve()).as_posix()
        with git.CatFile(repo) as cat:  # one process: the blob at rev:path, or none
            data = cat.blob(f"{rev}:{rel}")
    except (ValueError, git.GitError):
        return None
    if data is None:
        return None
    try:
        return loads_toml(data.decode("utf-8"), where=rel)  # bounded nesting and integers
    except (UnicodeDecodeError, ConfigError):
        return None


def pinned_at(repo: Path, rev: str, pin_file: Path | None, table: str, key: str) -> str | None:
    """``[table] key`` of a pin file as it was at ``rev`` (e.g. the engine rev before the sync)."""
    data = _toml_at(repo, rev, pin_file)
    value = (data or {}).get(table, {}).get(key)
    return value if isinstance(value, str) else None


def pin_relpath(file: Path | None, config_file: Path | None, downstream: Path) -> str | None:
    """A pin file's path inside the downstream (``pins/slime.toml``), for comparing commits: the
    config's repository root or the downstream, whichever holds it (a head's config is read from a
    scratch copy of the head); None when neither does."""
    if file is None:
        return None
    from vimesync.safefs import find_root

    roots = ([find_root(config_file)] if config_file is not None else []) + [downstream]
    for root in roots:
        try:
            return lexical(file).relative_to(lexical(root)).as_posix()
        except ValueError:
            continue
    return None
