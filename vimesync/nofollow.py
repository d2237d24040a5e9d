"""Reading and writing inside a tree we own (the scratch tree, a source folder, ``--export``)
without ever following a symlink, in any component.

Every path is walked one component at a time from a directory descriptor of the tree's root,
each folder opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent (``openat``), and the
last component opened or inspected relative to its folder without following it. So a symlink
anywhere below the root -- one a patch created, or one in a source -- is never traversed, and
nothing outside the root is ever read, written or chmodded. The root itself is the caller's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class NotInTree(OSError):
    """A leading component is missing, a symlink or not a folder: the path is not in the tree."""


def _open_child_dir(parent: int, name: str, *, create: bool, shown: str) -> int:
    """Open the folder ``name`` below ``parent``; NotInTree (its filename: ``shown``, the path
    so far) when it is missing, a symlink or not a folder. Other errors (EACCES, ...) propagate."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise NotInTree(errno.ENOENT, "no such folder", shown) from None
        try:
            os.mkdir(name, 0o777, dir_fd=parent)
        except FileExistsError:
            pass  # created meanwhile, or a non-folder: the open below decides
        return _open_child_dir(parent, name, create=False, shown=shown)
    except OSError as exc:  # ELOOP (a symlink), ENOTDIR (a file)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise NotInTree(errno.ENOTDIR, "not a folder (or a symbolic link)", shown) from None
        raise


@contextmanager
def parent_dir(root: str | Path, rel: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """``(fd of the folder holding rel, rel's last component)``, walked without following any
    symlink; NotInTree when a leading component is missing (and not ``create``), a symlink or a
    file. ``create`` makes missing folders (never through a symlink)."""
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a plain relative path: {rel!r}")
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for i, part in enumerate(parts[:-1]):
            parent, fd = fd, _open_child_dir(fd, part, create=create, shown="/".join(parts[: i + 1]))
            # ``fd`` is the child's before the parent is closed: an exception here (a signal's,
            # raised by its handler) never has the ``finally`` close a descriptor twice, which
            # would replace that exception with EBADF, or close one another thread just opened.
            os.close(parent)
        yield fd, parts[-1]
    finally:
        os.close(fd)


def lstat(root: str | Path, rel: str) -> os.stat_result | None:
    """lstat of ``root/rel``; None when it, or any leading component as a folder, does not exist."""
    try:
        with parent_dir(root, rel) as (fd, name):
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (NotInTree, FileNotFoundError):
        return None


def read_entry(root: str | Path, rel: str, *, cap: int = -1) -> tuple[os.stat_result, bytes] | None:
    """``(lstat, bytes)`` of ``root/rel``: a regular file's content, a symlink's target, b"" for a
    folder; None when missing (or below a non-folder). Raises OSError for other kinds (FIFOs,
    devices: never opened) and ``EFBIG`` when a file is larger than ``cap`` (-1: no cap)."""
    try:
        with parent_dir(root, rel) as (fd, name):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                return st, os.fsencode(os.readlink(name, dir_fd=fd))
            if stat.S_ISDIR(st.st_mode):
                return st, b""
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            return st, _read_fd(os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=fd), rel, cap)
    except (NotInTree, FileNotFoundError):
        return None


def _read_fd(fd: int, rel: str, cap: int) -> bytes:
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):  # swapped since the lstat
            raise OSError(errno.EINVAL, "not a regular file", rel)
        if 0 <= cap < st.st_size:
            raise OSError(errno.EFBIG, "file too large", rel)
        return fh.read() if cap < 0 else fh.read(cap + 1)


def write_new(root: str | Path, rel: str, data: bytes, *, executable: bool, umask: bool = False) -> None:
    """Create ``root/rel`` (and its missing folders) as a new regular file: O_EXCL|O_NOFOLLOW, so
    an existing file or symlink is never reused; the mode is set on the descriptor (fchmod).
    ``umask``: keep the process umask (as git does) instead of an exact 0o755/0o644."""
    perm = 0o777 if executable else 0o666
    with parent_dir(root, rel, create=True) as (dfd, name):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(name, flags, perm if umask else 0o600, dir_fd=dfd)
        with os.fdopen(fd, "wb") as fh:
            if not umask:
                os.fchmod(fh.fileno(), 0o755 if executable else 0o644)
            fh.write(data)


def write_new_stream(
    root: str | Path, rel: str, chunks: Iterable[bytes], *, executable: bool, limit: int
) -> int:
    """:func:`write_new` from ``chunks`` (a large member streamed, never held whole): at most
    ``limit`` bytes, else EFBIG and the partial file removed. Returns the bytes written."""
    written = 0
    with parent_dir(root, rel, create=True) as (dfd, name):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(name, flags, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), 0o755 if executable else 0o644)
                for chunk in chunks:
                    written += len(chunk)
                    if written > limit:
                        raise OSError(errno.EFBIG, "more bytes than announced", rel)
                    fh.write(chunk)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dfd)
            raise
    return written


def symlink_new(root: str | Path, rel: str, target: bytes) -> None:
    """Create the symlink ``root/rel`` -> ``target`` (never following one on the way)."""
    with parent_dir(root, rel, create=True) as (dfd, name):
        os.symlink(target, name, dir_fd=dfd)
