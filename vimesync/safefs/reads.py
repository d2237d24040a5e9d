"""Bounded reads of the files untrusted input names: regular files only, never more than
``max_bytes`` (and no content in an error)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vimesync.errors import ConfigError
from vimesync.safefs.reach import Missing, NotARegularFile, describe, open_regular, parent_fd

MAX_CONFIG_BYTES = 1024 * 1024  # vimesync.toml, pins, policy, ledger: a few KB in practice; tomllib
# takes seconds on a few MiB of hostile (valid) TOML, so the cap is also a time bound


def stat_input(path: Path, *, root: Path | str | None = None) -> os.stat_result:
    """``read_input``'s checks without reading: the stat of a regular file reached safely."""
    with parent_fd(path, root) as (fd, name):
        ffd = open_regular(fd, name, str(path))
        try:
            return os.fstat(ffd)
        finally:
            os.close(ffd)


def read_input(path: Path, *, max_bytes: int, root: Path | str | None = None, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, never more than ``max_bytes`` of them.

    ConfigError naming the path (Missing, NotARegularFile) when it is absent, a symlink (at the
    last component or any folder below the repository root), a FIFO/device/socket, under /proc,
    /dev or /sys, or too big. ``what`` names the kind of file in the size message."""
    where = str(path)
    with parent_fd(path, root) as (fd, name):
        ffd = open_regular(fd, name, where)
    try:
        if os.fstat(ffd).st_size > max_bytes:
            raise ConfigError(where, f"{what} is over the {max_bytes}-byte limit")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:  # the file may have grown since fstat
            chunk = os.read(ffd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise ConfigError(where, f"cannot read: {exc.strerror}") from None
    finally:
        os.close(ffd)
    if total > max_bytes:
        raise ConfigError(where, f"{what} is over the {max_bytes}-byte limit")
    return b"".join(chunks)


def read_text_input(path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, root: Path | str | None = None) -> str:
    """``read_input`` decoded as UTF-8 (a BOM dropped); the error gives the byte offset only."""
    data = read_input(path, max_bytes=max_bytes, root=root)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"not UTF-8 ({exc.reason} at byte {exc.start})") from None


def input_kind(path: Path, *, root: Path | str | None = None) -> str:
    """``"file"``, ``"dir"`` or ``"missing"`` for ``path`` reached safely; ConfigError for a
    symlink or anything else."""
    try:
        with parent_fd(path, root) as (fd, name):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except Missing:
        return "missing"
    except FileNotFoundError:
        return "missing"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISLNK(st.st_mode):
        raise NotARegularFile(str(path), "refusing to follow a symbolic link")
    raise NotARegularFile(str(path), f"is {describe(st)}, not a regular file or folder")
