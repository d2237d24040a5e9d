"""Writing what ``pin bump --write/--refresh`` decided: a pin file edited in place, keeping its
comments and layout (``vimesync.tomledit``: tomlkit, the style-preserving TOML writer; a file
humans edit is never rebuilt by string building), and a set of files replaced all together or not at all.

All together: every new content is computed first (nothing on disk changes while anything can
still fail), every target is checked (no symlink below the repository root, regular files only,
``safefs``), then each is replaced atomically (temp file + rename in its folder); should a
replacement fail half way, the files already replaced get their old bytes back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import tomlkit

from vimesync import tomledit
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import Missing, check_output_path, read_input, write_atomic

MAX_REWRITTEN = 64 << 20  # a patch file's own cap (series.MAX_PATCH_BYTES)


def edit_toml(path: Path, table: str, values: Mapping[str, str]) -> bytes:
    """``path`` with ``[table] key = value`` set for each of ``values``, every other byte of the
    file (comments, order, quoting) kept as it was (``vimesync.tomledit``: checked like every TOML
    input before tomlkit reads it)."""
    doc = tomledit.load(path)
    section = doc.get(table)
    if not isinstance(section, tomlkit.items.Table):
        raise ConfigError(str(path), f"no [{table}] table to write the new pin into")
    for key, value in values.items():
        section[key] = value
    text = tomledit.dumps(doc)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{path}: a new value is not UTF-8, nothing written") from None


def relative_to_file(target: Path, file: Path) -> str:
    """``target`` as a config file names paths: relative to the file's folder, with ``/``."""
    return Path(os.path.relpath(os.path.abspath(target), os.path.abspath(file.parent))).as_posix()


def write_together(files: Mapping[Path, bytes]) -> None:
    """Replace every file of ``files`` with its new bytes, all or none (see the module doc)."""
    old: dict[Path, bytes | None] = {}
    for path in files:
        check_output_path(path, what="output")
        try:
            old[path] = read_input(path, max_bytes=MAX_REWRITTEN)
        except Missing:
            old[path] = None
    done: list[Path] = []
    try:
        for path, data in files.items():
            write_atomic(path, data)
            done.append(path)
    except BaseException:
        for path in reversed(done):
            before = old[path]
            try:
                if before is None:
                    path.unlink()
                else:
                    write_atomic(path, before)
            except (OSError, ConfigError):
                pass  # the error that stopped us is the one to report
        raise
