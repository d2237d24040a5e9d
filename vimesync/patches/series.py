"""Quilt series files: which patches to apply, in order, with which -pN.

Format (quilt's): one patch per line, relative to the series file's folder; blank lines and
``#`` comments (whole-line, or after whitespace at the end of a line) are ignored; a line may
end with ``-pN``. The series is untrusted (pull requests edit it), so an entry must stay
inside the series folder, even through symlinks, and must be a regular file. An empty series
is valid and means "no patches": a fork that has upstreamed everything is not an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from vimesync.errors import ConfigError, PatchError
from vimesync.patches.model import Series, SeriesEntry

MAX_SERIES_BYTES = 1024 * 1024
MAX_PATCH_BYTES = 64 * 1024 * 1024
MAX_STRIP = 64

_COMMENT = re.compile(r"(^|\s)#.*$")
_STRIP_OPT = re.compile(r"-p(\d+)")


def load_series(path: Path, *, default_strip: int = 1) -> Series:
    """Read a quilt series file (or the ``series`` file inside a directory).

    Every entry is resolved and checked: it must exist, be a regular file, stay inside the
    series folder, and appear once. Raises ConfigError naming the series file and line."""
    if path.is_dir():
        path = path / "series"
    where = str(path)
    if not path.is_file():
        raise ConfigError(where, "series file not found")
    if path.stat().st_size > MAX_SERIES_BYTES:
        raise ConfigError(where, f"series file larger than {MAX_SERIES_BYTES} bytes")
    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")  # editors on Windows add a BOM
    except UnicodeDecodeError as exc:
        raise ConfigError(where, f"series file is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if any(line.startswith(("diff --git ", "--- ", "+++ ", "@@ -")) for line in text.splitlines()[:200]):
        raise ConfigError(
            where,
            "this is a patch, not a series file",
            hint="list the patch in a file named 'series' next to it and pass that (or its folder)",
        )
    folder = path.parent.resolve()
    entries: list[SeriesEntry] = []
    seen: dict[Path, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        name, *options = line.split()
        strip = default_strip
        for opt in options:
            m = _STRIP_OPT.fullmatch(opt)
            if not m:
                hint = " (reversed patches are not supported)" if opt == "-R" else ""
                raise ConfigError(
                    where, f"unsupported option {opt!r} for {name}: only -pN is{hint}", line=lineno
                )
            strip = int(m.group(1))
            if strip > MAX_STRIP:
                raise ConfigError(where, f"strip level {opt} is absurd", line=lineno)
        resolved = _resolve_entry(folder, name, where, lineno)
        if resolved in seen:
            raise ConfigError(where, f"{name} is listed twice (first on line {seen[resolved]})", line=lineno)
        seen[resolved] = lineno
        entries.append(SeriesEntry(name=name, path=resolved, strip=strip, line=lineno))
    return Series(path=path, entries=tuple(entries))


def _resolve_entry(folder: Path, name: str, where: str, lineno: int) -> Path:
    """The real path of a series entry, refused when it could leave the series folder."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise ConfigError(
            where, f"absolute patch path {name!r} (entries are relative to the series folder)", line=lineno
        )
    if ".." in parts:
        raise ConfigError(where, f"patch path {name!r} leaves the series folder", line=lineno)
    candidate = folder / name
    if not candidate.exists():
        raise ConfigError(where, f"patch file {name} not found", line=lineno)
    resolved = candidate.resolve()
    if not resolved.is_relative_to(folder):
        raise ConfigError(
            where, f"patch path {name!r} resolves outside the series folder (symlink?)", line=lineno
        )
    if not resolved.is_file():
        raise ConfigError(where, f"patch path {name!r} is not a regular file", line=lineno)
    return resolved


def read_patch(entry: SeriesEntry, *, max_bytes: int = MAX_PATCH_BYTES) -> bytes:
    """Read a series entry's bytes, refusing files over ``max_bytes`` before reading them."""
    size = entry.path.stat().st_size
    if size > max_bytes:
        raise PatchError(entry.name, f"patch file is {size} bytes, over the {max_bytes}-byte limit")
    with entry.path.open("rb") as fh:
        data = fh.read(max_bytes + 1)  # the file may have grown since stat()
    if len(data) > max_bytes:
        raise PatchError(entry.name, f"patch file is over the {max_bytes}-byte limit")
    return data
