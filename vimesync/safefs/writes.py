"""Outputs (``--output``, ``--export``, the review ledger): reached by the same walk as inputs, and
written atomically (a temp file created ``O_EXCL|O_NOFOLLOW`` in the target's folder, then
``os.replace``)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from vimesync.errors import ConfigError
from vimesync.safefs.reach import DIR_FLAGS, NOFOLLOW, Missing, NotARegularFile, describe, parent_fd


def check_output_path(path: Path, *, root: Path | str | None = None, what: str = "output") -> None:
    """Refuse ``path`` when it, or a folder between the repository root and it, is a symlink
    or when it is not a (possibly absent) regular file. Missing folders are not created."""
    where = f"{what} {path}"
    try:
        with parent_fd(path, root, where=where) as (fd, name):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return
    except Missing:
        raise ConfigError(where, "its folder does not exist") from None
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(where, f"exists and is {describe(st)}; refusing to write through it")


def ensure_output_dir(path: Path, *, root: Path | str | None = None, what: str = "--export") -> None:
    """Create the folder ``path`` (and missing parents) without following any symlink below the
    repository root; refuse an existing path that is a symlink, not a folder, or not empty."""
    where = f"{what} {path}"
    with parent_fd(path, root, create=True, where=where) as (fd, name):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except OSError as exc:
                raise ConfigError(where, f"cannot create it ({exc.strerror})") from None
            return
        if not stat.S_ISDIR(st.st_mode):
            raise NotARegularFile(where, f"exists and is {describe(st)}; refusing to write into it")
        dfd = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            if os.listdir(dfd):
                raise ConfigError(where, "exists and is not an empty directory; refusing to write into it")
        finally:
            os.close(dfd)


def write_atomic(
    path: Path, data: bytes, *, root: Path | str | None = None, mkdirs: bool = False, what: str = "output"
) -> None:
    """Write ``data`` to ``path`` atomically: a reader sees the old file or the new one.

    The temp file is created ``O_EXCL|O_NOFOLLOW`` in the same folder, reached without following
    a symlink below the repository root, and renamed over ``path``; an existing symlink (or
    anything but a regular file) at ``path`` is refused. An existing file keeps its mode."""
    where = f"{what} {path}"
    try:
        ctx = parent_fd(path, root, create=mkdirs, where=where)
        with ctx as (fd, name):
            mode = 0o666
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None:
                if not stat.S_ISREG(st.st_mode):
                    raise NotARegularFile(
                        where, f"exists and is {describe(st)}; refusing to write through it"
                    )
                mode = stat.S_IMODE(st.st_mode)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
            for attempt in range(100):
                tmp = f".{name[:100]}.{os.getpid()}.{attempt}.tmp"
                try:
                    tfd = os.open(tmp, flags, 0o600, dir_fd=fd)
                    break
                except FileExistsError:
                    continue
            else:  # pragma: no cover - 100 stale temp files
                raise ConfigError(where, "cannot create a temporary file next to it")
            try:
                if st is not None:
                    os.fchmod(tfd, mode)
                else:
                    umask = os.umask(0)
                    os.umask(umask)
                    os.fchmod(tfd, 0o666 & ~umask)
                view = memoryview(data)
                while view:
                    view = view[os.write(tfd, view) :]
                os.fsync(tfd)
                os.close(tfd)
                tfd = -1
                os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                if tfd >= 0:
                    os.close(tfd)
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
                raise
    except Missing:
        raise ConfigError(where, "its folder does not exist") from None
    except OSError as exc:
        raise ConfigError(where, f"cannot write: {exc.strerror}") from None
