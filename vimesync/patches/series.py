"""Quilt series files: which patches to apply, in order, with which -pN.

Format (quilt's): one patch per line, relative to the series file's folder; blank lines and
``#`` comments (whole-line, or after whitespace at the end of a line) are ignored; a line may
end with ``-pN``. The series is untrusted (pull requests edit it), so an entry must stay
inside the series folder and must be a regular file; no symlink is followed, neither at the
series, nor at a patch, nor at a folder on the way (``vimesync.safefs``). An empty series
is valid and means "no patches": a fork that has upstreamed everything is not an error.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from vimesync import safefs
from vimesync.errors import ConfigError, PatchError
from vimesync.patches.model import MAX_PATCH_BYTES, Series, SeriesEntry
from vimesync.readers import WORKTREE, Reader
from vimesync.text import file_lines

MAX_SERIES_BYTES = 1024 * 1024
MAX_SERIES_TOTAL = 256 * 1024 * 1024  # all patches together: every one is held in memory at once
MAX_SERIES_ENTRIES = 10_000
MAX_STRIP = 64

_COMMENT = re.compile(r"(^|\s)#.*$")
_STRIP_OPT = re.compile(r"-p(\d{1,6})")


def load_series(path: Path, *, default_strip: int = 1, reader: Reader = WORKTREE) -> Series:
    """Read a quilt series file (or the ``series`` file inside a directory).

    The series and every entry are opened through ``safefs``: no symlink is followed at the file
    or at a folder below the repository root, and only regular files count. Every entry must
    exist, stay inside the series folder and appear once; the entries are capped in number and in
    total size. Raises ConfigError naming the series file and line, quoting at most a short,
    escaped excerpt of the line. ``reader``: the working tree, or a commit (what a head holds)."""
    try:
        if reader.kind(path) == "dir":
            path = path / "series"
        data = reader.read(path, max_bytes=MAX_SERIES_BYTES, what="series file")
    except safefs.Missing:
        raise ConfigError(str(path), "series file not found") from None
    except safefs.NotARegularFile as exc:
        raise ConfigError(str(path), f"series file {exc.message.removeprefix(exc.path + ': ')}") from None
    where = str(path)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # editors on Windows add a BOM
    except UnicodeDecodeError as exc:
        raise ConfigError(where, f"series file is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if any(line.startswith(("diff --git ", "--- ", "+++ ", "@@ -")) for line in file_lines(text)[:200]):
        raise ConfigError(
            where,
            "this is a patch, not a series file",
            hint="list the patch in a file named 'series' next to it and pass that (or its folder)",
        )
    folder = safefs.lexical(path.parent)
    entries: list[SeriesEntry] = []
    seen: dict[object, int] = {}
    total = 0
    for lineno, raw in enumerate(file_lines(text), start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        name, *options = line.split()
        shown = safefs.excerpt(name)
        strip = default_strip
        for opt in options:
            m = _STRIP_OPT.fullmatch(opt)
            if not m:
                hint = " (reversed patches are not supported)" if opt == "-R" else ""
                raise ConfigError(
                    where,
                    f"unsupported option {safefs.excerpt(opt, 20)} for {shown}: the only option a series "
                    f"line may have is -pN, written as one word (-p1, -p2){hint}",
                    line=lineno,
                )
            strip = int(m.group(1))
            if strip > MAX_STRIP:
                raise ConfigError(where, f"strip level {opt} is absurd", line=lineno)
        if len(entries) >= MAX_SERIES_ENTRIES:
            raise ConfigError(where, f"more than {MAX_SERIES_ENTRIES} patches in the series", line=lineno)
        candidate, key, size = _check_entry(folder, name, where, lineno, reader)
        if key in seen:
            raise ConfigError(where, f"{shown} is listed twice (first on line {seen[key]})", line=lineno)
        seen[key] = lineno
        total += size
        if total > MAX_SERIES_TOTAL:
            raise ConfigError(
                where, f"the patches listed add up to more than {MAX_SERIES_TOTAL} bytes", line=lineno
            )
        entries.append(SeriesEntry(name=name, path=candidate, strip=strip, line=lineno))
    return Series(path=path, entries=tuple(entries))


def _check_entry(
    folder: Path, name: str, where: str, lineno: int, reader: Reader
) -> tuple[Path, object, int]:
    """A series entry's path (lexical, inside the series folder), what makes it one file and its
    size, reached without following a symlink anywhere below the series folder."""
    shown = safefs.excerpt(name)
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise ConfigError(
            where, f"absolute patch path {shown} (entries are relative to the series folder)", line=lineno
        )
    if ".." in parts:
        raise ConfigError(where, f"patch path {shown} leaves the series folder", line=lineno)
    candidate = safefs.lexical(folder / name)
    try:
        return (candidate, *reader.identity(candidate, root=folder))
    except safefs.Missing:
        raise ConfigError(where, f"patch file {shown} not found", line=lineno) from None
    except safefs.NotARegularFile as exc:
        reason = exc.message.removeprefix(str(candidate) + ": ")
        raise ConfigError(where, f"patch path {shown}: {reason}", line=lineno) from None
    except ConfigError as exc:
        reason = exc.message.removeprefix(str(candidate) + ": ")
        raise ConfigError(where, f"patch path {shown}: {reason}", line=lineno) from None


def _series_folder(entry: SeriesEntry) -> Path:
    """The folder of the series that listed ``entry``: nothing below it may be a symlink."""
    depth = len(PurePosixPath(entry.name.replace("\\", "/")).parts)
    return entry.path.parents[depth - 1] if 0 < depth <= len(entry.path.parents) else entry.path.parent


def read_patch(entry: SeriesEntry, *, max_bytes: int = MAX_PATCH_BYTES, reader: Reader = WORKTREE) -> bytes:
    """Read a series entry's bytes through ``reader`` (no symlink followed, regular files only),
    refusing files over ``max_bytes`` before reading them."""
    try:
        return reader.read(entry.path, max_bytes=max_bytes, root=_series_folder(entry), what="patch file")
    except ConfigError as exc:
        reason = exc.message.removeprefix(str(entry.path) + ": ")
        raise PatchError(entry.name, reason) from None
