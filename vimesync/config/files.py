"""The files a config names: read through ``safefs`` (bounded, no symlink followed), and kept
inside the repository that holds the config when they are committed (pins, policy, series).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vimesync.errors import ConfigError
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import MAX_CONFIG_BYTES, lexical, loads_toml


def read_text(
    path: Path, *, root: Path | None = None, max_bytes: int = MAX_CONFIG_BYTES, reader: Reader = WORKTREE
) -> str:
    """A UTF-8 input file (config, pin, policy, metadata), read through ``reader`` (the working
    tree through ``safefs``, or a commit): no symlink followed inside the repository, regular files
    only, at most ``max_bytes``. ConfigError naming it when unreadable; never any of its content."""
    return reader.read_text(path, root=root, max_bytes=max_bytes)


def read_toml(path: Path, *, root: Path | None = None, reader: Reader = WORKTREE) -> dict[str, Any]:
    """Load a TOML file; ConfigError naming the file and line on any problem (nesting deeper than
    ``safefs.MAX_NESTING`` and over-long integers included)."""
    return loads_toml(read_text(path, root=root, reader=reader), where=str(path))


def confined(root: Path, target: Path | None, *, file: Path, key: str) -> Path | None:
    """``target`` (made absolute, never resolved) if it lies inside ``root``, else ConfigError.

    Pins, policies and series files are committed, so a pull request can edit them: a path
    they name must stay inside the repository, or an untrusted change could point the check at
    any file on the CI machine and have parts of it echoed in a diagnostic. The check is
    lexical: symlinks are not resolved here but refused when the file is read (``safefs``)."""
    if target is None:
        return None
    real = lexical(target)
    if not real.is_relative_to(lexical(root)):
        raise ConfigError(
            str(file),
            f"{key} must be inside the repository {root}",
            hint="pins, policies and series files are repository content: keep them anywhere inside "
            "the repository that holds the config",
        )
    return real
