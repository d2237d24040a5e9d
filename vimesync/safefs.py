"""The one choke point for files named by untrusted input, and for the files we write.

Everything in a checkout is written by whoever opened the pull request, so a file it names is
opened without following a symlink anywhere inside the repository: the repository root (see
``find_root``) is opened as given, then every folder below it with ``O_NOFOLLOW|O_DIRECTORY``
relative to its parent's descriptor, then the file itself with ``O_NOFOLLOW|O_NONBLOCK`` (a FIFO
cannot hang us). Only regular files are read, never more than ``max_bytes``, and nothing under
``/proc``, ``/dev`` or ``/sys``. Folders above the repository (``/home/runner``) are the job's
and are trusted. Errors name the path and the reason, never a byte of content.

Outputs (``--output``, ``--export``, the review ledger) get the same walk, and files are
written atomically: a temp file created ``O_EXCL|O_NOFOLLOW`` in the target's folder, then
``os.replace``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vimesync import nofollow
from vimesync.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_CONFIG_BYTES = 1024 * 1024  # vimesync.toml, pins, policy, ledger: a few KB in practice; tomllib
# takes seconds on a few MiB of hostile (valid) TOML, so the cap is also a time bound
MAX_NESTING = 64  # TOML/JSON arrays and tables; real files use fewer than 5 levels
_MARKERS = (".git", "vimesync.toml")  # what makes a folder a repository root
_REFUSED = ("/proc", "/dev", "/sys")  # pseudo-files: sizes lie, reads may block or leak
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


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
    home = os.environ.get("HOME")
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


def _describe(st: os.stat_result) -> str:
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
def _parent_fd(
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
            kind = _describe(os.lstat(here))
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


def _open_regular(fd: int, name: str, where: str) -> int:
    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
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
        raise NotARegularFile(where, f"is {_describe(st)}, not a regular file", is_dir=is_dir)
    return ffd


def stat_input(path: Path, *, root: Path | str | None = None) -> os.stat_result:
    """``read_input``'s checks without reading: the stat of a regular file reached safely."""
    with _parent_fd(path, root) as (fd, name):
        ffd = _open_regular(fd, name, str(path))
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
    with _parent_fd(path, root) as (fd, name):
        ffd = _open_regular(fd, name, where)
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
        with _parent_fd(path, root) as (fd, name):
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
    raise NotARegularFile(str(path), f"is {_describe(st)}, not a regular file or folder")


# One left-to-right pass over TOML tokens (strings and comments skipped, brackets counted, dots
# counted per key) before tomllib sees the text: tomllib recurses once per nesting level, and its
# work per dotted key or table name grows with the square of the parts (80 KB of ``a.a.a`` =
# 33 s). Each string token matches as soon as its opening quote does (an unterminated one runs to
# the end of its line or of the text), so no position is ever scanned twice; at an unterminated
# string the scan stops, since tomllib rejects the text there before reading any further.
_TOML_SCAN = re.compile(
    r"""
      (?P<open>[\[{])
    | (?P<close>[\]}])
    | (?P<dot>\.)
    | [=,\n]+
    | \#[^\n]*
    | \"\"\"(?:[^"\\]|\\.|""?(?!"))*(?P<ml>"{3,5})?
    | '''(?:[^']|''?(?!'))*(?P<mll>'{3,5})?
    | "(?:[^"\\\n]|\\[^\n])*(?P<basic>")?
    | '[^'\n]*(?P<literal>')?
    """,
    re.VERBOSE | re.DOTALL,
)
_STRING_ENDS = ("ml", "mll", "basic", "literal")
MAX_KEY_PARTS = 32  # ``a.b.c = 1`` has 3; real keys and table names have fewer than 6


def _toml_shape_error(text: str) -> str | None:
    """Why tomllib must not see ``text`` (nested too deep, a key of too many parts), or None."""
    depth = dots = 0
    for m in _TOML_SCAN.finditer(text):
        kind = m.lastgroup
        if kind == "dot":  # a float or a time has one; only a key has more between delimiters
            dots += 1
            if dots >= MAX_KEY_PARTS:
                return f"a key or table name has more than {MAX_KEY_PARTS} dotted parts"
            continue
        if kind == "open":
            depth += 1
            if depth > MAX_NESTING:
                return f"nested deeper than {MAX_NESTING} levels"
        elif kind == "close":
            depth = max(0, depth - 1)
        elif m.group()[0] in "\"'":
            if kind not in _STRING_ENDS:
                return None  # unterminated: tomllib stops at it
            continue  # a quoted key part: ``"a"."b"`` keeps counting dots
        dots = 0
    return None


def _toml_message(exc: Exception) -> tuple[str, int | None]:
    """The message and line of a TOMLDecodeError (3.11 puts the line only in the text). tomllib's
    messages name a character at most (``Illegal character '\\n'``), never a line of the file."""
    line = getattr(exc, "lineno", None)
    msg, _, at = str(exc).partition(" (at line ")
    if line is None and at:
        digits = at.split(",")[0]
        line = int(digits) if digits.isdigit() and len(digits) < 12 else None
    # Some messages quote a key ("Cannot declare ('a', 'b') twice"): keep them short and visible.
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in msg)
    return (shown[:120] + "…" if len(shown) > 120 else shown), line


def loads_toml(text: str, *, where: str) -> dict[str, Any]:
    """``tomllib.loads`` with bounded nesting and integers; ConfigError naming ``where``."""
    problem = _toml_shape_error(text)
    if problem:
        raise ConfigError(where, f"invalid TOML: {problem}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg, line = _toml_message(exc)
        raise ConfigError(where, f"invalid TOML: {msg}", line=line) from None
    except RecursionError:
        raise ConfigError(where, "invalid TOML: nested too deeply") from None
    except ValueError:  # int() over sys.get_int_max_str_digits() digits; its message has no content
        raise ConfigError(where, "invalid TOML: a number is too long") from None


def _json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether parsed JSON nests deeper than ``limit`` (iterative: no recursion, linear)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def loads_json(text: str, *, where: str) -> Any:
    """``json.loads`` with bounded nesting and integers; ConfigError naming ``where``. json's C
    scanner is linear and guards its recursion (a RecursionError past the interpreter's limit,
    never a crash), so it parses first and the nesting is checked on the result."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(where, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise ConfigError(where, f"invalid JSON: nested deeper than {MAX_NESTING} levels") from None
    except ValueError:
        raise ConfigError(where, "invalid JSON: a number is too long") from None
    if isinstance(data, (dict, list)) and _json_depth_exceeds(data, MAX_NESTING):
        raise ConfigError(where, f"invalid JSON: nested deeper than {MAX_NESTING} levels")
    return data


def excerpt(text: str, limit: int = 80) -> str:
    """A short, escaped rendering of untrusted text for an error message: quoted like ``repr``,
    control and invisible characters shown as escapes, cut to about ``limit`` characters."""
    shown = repr(text[:limit])
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in shown)
    return shown + ("…" if len(text) > limit else "")


# ---- outputs ----


def check_output_path(path: Path, *, root: Path | str | None = None, what: str = "output") -> None:
    """Refuse ``path`` when it, or a folder between the repository root and it, is a symlink
    or when it is not a (possibly absent) regular file. Missing folders are not created."""
    where = f"{what} {path}"
    try:
        with _parent_fd(path, root, where=where) as (fd, name):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return
    except Missing:
        raise ConfigError(where, "its folder does not exist") from None
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(where, f"exists and is {_describe(st)}; refusing to write through it")


def ensure_output_dir(path: Path, *, root: Path | str | None = None, what: str = "--export") -> None:
    """Create the folder ``path`` (and missing parents) without following any symlink below the
    repository root; refuse an existing path that is a symlink, not a folder, or not empty."""
    where = f"{what} {path}"
    with _parent_fd(path, root, create=True, where=where) as (fd, name):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except OSError as exc:
                raise ConfigError(where, f"cannot create it ({exc.strerror})") from None
            return
        if not stat.S_ISDIR(st.st_mode):
            raise NotARegularFile(where, f"exists and is {_describe(st)}; refusing to write into it")
        dfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
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
        ctx = _parent_fd(path, root, create=mkdirs, where=where)
        with ctx as (fd, name):
            mode = 0o666
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None:
                if not stat.S_ISREG(st.st_mode):
                    raise NotARegularFile(
                        where, f"exists and is {_describe(st)}; refusing to write through it"
                    )
                mode = stat.S_IMODE(st.st_mode)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
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


# ---- scratch folders ----


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """``tempfile.TemporaryDirectory`` whose cleanup never raises: a tree a patch made (however
    deep or odd) is removed as far as possible, and a failure is not a traceback."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        remove_tree(Path(path))


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it without following symlinks; never raises.

    ``shutil.rmtree`` first; when it fails (RecursionError on a very deep tree, an odd entry),
    the tree is flattened instead: children of a non-empty folder are moved up into ``path``, so
    no more than two descriptors are open and nothing recurses."""
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    with contextlib.suppress(OSError):
        _flatten_remove(path)
        os.rmdir(path)


def _flatten_remove(path: Path) -> None:
    top = os.open(path, _DIR_FLAGS)
    moved = 0
    try:
        while True:
            names = os.listdir(top)
            progress = False
            for name in names:
                try:
                    st = os.stat(name, dir_fd=top, follow_symlinks=False)
                    if not stat.S_ISDIR(st.st_mode):
                        os.unlink(name, dir_fd=top)
                        progress = True
                        continue
                    with contextlib.suppress(OSError):
                        os.rmdir(name, dir_fd=top)
                        progress = True
                        continue
                    sub = os.open(name, _DIR_FLAGS, dir_fd=top)
                    try:
                        for child in os.listdir(sub):
                            moved += 1
                            os.rename(child, f".vimesync-rm-{moved}", src_dir_fd=sub, dst_dir_fd=top)
                            progress = True
                    finally:
                        os.close(sub)
                except OSError:
                    continue
            if not names or not progress:
                return
    finally:
        os.close(top)
