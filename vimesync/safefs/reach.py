"""Reaching a path named by untrusted input without following a symlink below the repository root.

The root (:func:`find_root`) is opened as given, then every folder below it with
``O_NOFOLLOW|O_DIRECTORY`` relative to its parent's descriptor (:func:`parent_fd`), then the file
itself with ``O_NOFOLLOW|O_NONBLOCK`` (:func:`open_regular`: a FIFO cannot hang us). Nothing
under ``/proc``, ``/dev`` or ``/sys``. Errors name the path and the reason, never a byte of content.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from vimesync import nofollow
from vimesync.errors import ConfigError
from vimesync.settings import installed

_MARKERS = (".git", "vimesync.toml")  # what makes a folder a repository root
_REFUSED = ("/proc", "/dev", "/sys")  # pseudo-files: sizes lie, reads may block or leak
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class NotARegularFile(ConfigError):
    """The path names something other than a regular file (``is_dir`` when it is a folder)."""

    def __init__(self, path: str, message: str, *, is_dir: bool = False) -> None:
        super().__init__(path, message)
        self.is_dir = is_dir


class Missing(ConfigError):
    """The path (or one of its folders) does not exist."""


def lexical(path: Path | str) -> Path:
    """``path`` made absolute and normalised without touching the filesystem (no symlink is
    resolved: resolving would follow exactly the links we want to refuse)."""
    return Path(os.path.abspath(path))


def marks_checkout(folder: Path) -> bool:
    """True when ``folder`` holds ``.git`` or ``vimesync.toml``: the root of a checkout (a pull
    request can plant the latter deeper down, which only ever makes callers stricter)."""
    return any(os.path.lexists(folder / m) for m in _MARKERS)


def find_root(path: Path | str, root: Path | str | None = None) -> Path:
    """The folder below which every component of ``path`` must be a real folder.

    The outermost of: ``root`` (when it holds ``path``) and every ancestor holding ``.git`` or
    ``vimesync.toml`` (below ``$HOME``, so a dotfiles repository in the home folder does not
    count). Outermost, because a pull request can add markers deeper down but not above the
    checkout. Failing all, the cwd when it holds ``path``, else the file's own folder."""
    p = lexical(path)
    best: Path | None = None
    if root is not None:
        r = lexical(root)
        if p != r and p.is_relative_to(r):
            best = r
    home = installed().home  # the job's HOME, from the settings snapshot the CLI installed
    stop = lexical(home) if home and p.is_relative_to(lexical(home)) and lexical(home) != p else None
    for anc in p.parents:
        if stop is not None and not (anc != stop and anc.is_relative_to(stop)):
            break
        if marks_checkout(anc) and (best is None or best.is_relative_to(anc)):
            best = anc
    if best is None:
        cwd = lexical(os.getcwd())
        best = cwd if p != cwd and p.is_relative_to(cwd) else p.parent
    return best


def pseudo_area(*paths: Path | str) -> str | None:
    """``/proc``, ``/dev`` or ``/sys`` when a path lies there (pseudo files: sizes lie, reads may
    block or leak the process's own environment), else None."""
    for candidate in map(str, paths):
        for area in _REFUSED:
            if candidate == area or candidate.startswith(area + "/"):
                return area
    return None


def describe(st: os.stat_result) -> str:
    """What ``st`` is, for a message ("a symbolic link", "a FIFO"...)."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


@contextlib.contextmanager
def parent_fd(
    path: Path, root: Path | str | None, *, create: bool = False, where: str | None = None
) -> Iterator[tuple[int, str]]:
    """A descriptor of ``path``'s folder reached without following a symlink below the root,
    and the last component's name. ``create`` makes missing folders (for outputs)."""
    where = where or str(path)
    if "\0" in str(path):  # os.open would raise ValueError: a series entry may hold one
        raise NotARegularFile(where, "a NUL byte in the path")
    p = lexical(path)
    if p.parent == p:
        raise NotARegularFile(where, "not a file", is_dir=True)
    base = find_root(p, root)
    # Below ``base`` nothing is followed, so the path is where it says, or the root's real place.
    area = pseudo_area(p, os.path.realpath(base))
    if area is not None:
        raise NotARegularFile(where, f"refusing to use a path under {area}")
    rel = p.relative_to(base).as_posix()
    walk = contextlib.ExitStack()
    try:
        fd, name = walk.enter_context(nofollow.parent_dir(base, rel, create=create))
    except nofollow.NotInTree as exc:
        if exc.errno == errno.ENOENT:
            raise Missing(where, "no such file") from None
        here = base / exc.filename
        try:
            kind = describe(os.lstat(here))
        except OSError:
            kind = "not a folder"
        raise NotARegularFile(where, f"refusing to follow {here}: it is {kind} inside {base}") from None
    except FileNotFoundError:  # the root itself
        raise Missing(where, "no such file") from None
    except OSError as exc:
        shown = f" {exc.filename}" if exc.filename else ""
        raise ConfigError(where, f"cannot open or create folder{shown}: {exc.strerror}") from None
    with walk:
        yield fd, name


def open_regular(fd: int, name: str, where: str) -> int:
    """A descriptor of the regular file ``name`` in folder ``fd``, opened without following a link."""
    flags = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        ffd = os.open(name, flags | getattr(os, "O_CLOEXEC", 0), dir_fd=fd)
    except FileNotFoundError:
        raise Missing(where, "no such file") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise NotARegularFile(where, "refusing to follow a symbolic link") from None
        if exc.errno == errno.EISDIR:
            raise NotARegularFile(where, "is a directory, not a file", is_dir=True) from None
        raise ConfigError(where, f"cannot read: {exc.strerror}") from None
    st = os.fstat(ffd)
    if not stat.S_ISREG(st.st_mode):
        os.close(ffd)
        is_dir = stat.S_ISDIR(st.st_mode)
        raise NotARegularFile(where, f"is {describe(st)}, not a regular file", is_dir=is_dir)
    return ffd
