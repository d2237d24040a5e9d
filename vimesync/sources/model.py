"""What every pinned source is: a read-only listing of files (:class:`Entry`) that hands out their
bytes, the :class:`SourceInfo` shown in reports, and the archive :class:`Limits`."""

from __future__ import annotations

import errno
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from vimesync import nofollow
from vimesync.errors import BadInput
from vimesync.git import MODE_EXEC, MODE_LINK
from vimesync.pycheck.model import PyFile, StatKey


@dataclass(frozen=True)
class SourceInfo:
    kind: str  # "git" | "directory" | "archive"
    path: str
    rev: str | None  # full resolved sha for git sources, else None


@dataclass(frozen=True)
class Entry:
    """One file of a source: ``mode`` as git spells it, ``size`` in bytes, ``oid`` for git sources."""

    mode: int  # MODE_FILE, MODE_EXEC or MODE_LINK
    size: int
    oid: str | None = None

    @property
    def is_symlink(self) -> bool:
        return self.mode == MODE_LINK


@dataclass(frozen=True)
class Limits:
    """Caps applied to archives before (tar: while) anything is unpacked: zip bombs, inode floods."""

    max_members: int = 200_000
    max_total_size: int = 4 << 30  # uncompressed bytes


class Source:
    """Common interface; use :func:`open_source`. A context manager: ``close()`` frees processes/scratch."""

    info: SourceInfo
    notes: tuple[str, ...] = ()  # facts worth telling the user ("using HEAD", "skipped 2 submodules")

    def __init__(self, info: SourceInfo, files: dict[str, Entry]) -> None:
        self.info = info
        self._files = files  # the listing: complete when the subclass's constructor returns
        self._python: list[PyFile] | None = None  # python_files(), made on first use
        _refuse_file_parents(info.path, files)

    def list_files(self) -> Mapping[str, Entry]:
        """Every file, ``/``-separated relative path -> Entry (read-only view)."""
        return MappingProxyType(self._files)

    def entry(self, path: str) -> Entry:
        try:
            return self._files[path]
        except KeyError:
            raise BadInput(f"{self.info.path}: no file {path!r} in the source") from None

    def read(self, path: str) -> bytes:
        """The bytes of ``path``; for a symlink, its target (as git stores it)."""
        raise NotImplementedError

    def read_many(self, paths: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """``(path, bytes)`` for each path, in order; sources override this with a bulk read."""
        for path in paths:
            yield path, self.read(path)

    def python_files(self, *, exclude: Collection[str] = ()) -> list[PyFile]:
        """The ``*.py`` regular files (not symlinks), minus ``exclude`` (files the stack touched),
        as parser inputs. Contents are read later through ``read_many``, or by path when on disk."""
        if self._python is None:  # once: a cold check asks before the stack applies and after
            self._python = []
            for path, e in self._files.items():
                if path.endswith(".py") and not e.is_symlink:
                    file = self._disk_path(path)
                    stat = self._stat(path) if file else None
                    self._python.append(PyFile(path, size=e.size, oid=e.oid, file=file, stat=stat))
        return [f for f in self._python if f.path not in exclude]

    def _disk_path(self, path: str) -> str | Path | None:
        return None

    def _stat(self, path: str) -> StatKey | None:
        """The lstat key of an on-disk file as listed, when the tree stays in place across runs."""
        return None

    def export(self, dest: Path, *, only: Iterable[str] | None = None, skip: Collection[str] = ()) -> int:
        """Write files (all, or ``only``), minus ``skip``, under ``dest`` with their modes; symlinks as
        symlinks. Never overwrites and never writes outside ``dest``. Returns the number written."""
        paths = [p for p in (self._files if only is None else only) if p not in skip]
        for p in paths:
            self.entry(p)  # unknown path -> BadInput before writing anything
        dest.mkdir(parents=True, exist_ok=True)
        streamed = [p for p in paths if self._streams(p)]
        for path in streamed:
            e = self._files[path]
            write_stream(dest, path, self._chunks(path), e.mode, size=e.size)
        done = set(streamed)
        count = len(streamed)
        for path, data in self.read_many(p for p in paths if p not in done):
            write_file(dest, path, data, self._files[path].mode)
            count += 1
        return count

    def _streams(self, path: str) -> bool:
        """Whether ``path`` is exported in chunks (:meth:`_chunks`) rather than read whole."""
        return False

    def _chunks(self, path: str) -> Iterator[bytes]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_file_parents(shown: str, files: Mapping[str, Entry]) -> None:
    """No path may be both a file (or symlink) and the parent of another path: a git tree with a
    duplicate entry name, or a hand-made archive, would otherwise have ``--export`` (and the
    scratch tree) write ``L/x`` through the symlink ``L``."""
    folders: set[str] = set()
    for path in files:
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            if path in folders:
                break
            folders.add(path)
    clash = folders.intersection(files)
    if clash:
        raise BadInput(f"{shown}: {min(clash)!r} is both a file and a folder in the source")


def write_file(dest: Path, path: str, data: bytes, mode: int) -> None:
    """Create ``dest/path`` with git ``mode``, its folders included: never through a symlink in any
    component, never over an existing file (O_EXCL|O_NOFOLLOW), the mode set on the descriptor."""
    rel = safe_relpath(path, what="path")
    try:
        if mode == MODE_LINK:
            nofollow.symlink_new(dest, rel, data)
        else:
            nofollow.write_new(dest, rel, data, executable=mode == MODE_EXEC)
    except nofollow.NotInTree:
        raise BadInput(f"{dest}: cannot write {rel!r}: a parent is a file or symbolic link") from None


def write_stream(dest: Path, path: str, chunks: Iterable[bytes], mode: int, *, size: int) -> None:
    """:func:`write_file` of a regular file from ``chunks``, at most ``size`` bytes (what the
    source announced for it: more is refused, the partial file removed)."""
    rel = safe_relpath(path, what="path")
    try:
        written = nofollow.write_new_stream(dest, rel, chunks, executable=mode == MODE_EXEC, limit=size)
    except nofollow.NotInTree:
        raise BadInput(f"{dest}: cannot write {rel!r}: a parent is a file or symbolic link") from None
    except OSError as exc:
        if exc.errno != errno.EFBIG:
            raise
        raise BadInput(f"{path!r} holds more than the {size:,} bytes its source announced") from None
    if written != size:
        raise BadInput(f"{path!r} holds {written:,} bytes, not the {size:,} its source announced")


DRIVE_LETTER = re.compile(r"^[A-Za-z]:")


def safe_relpath(name: str, *, what: str = "member") -> str:
    """Normalize an archive/tree path to ``a/b/c``; raise BadInput for anything that could escape."""
    why = None
    if "\0" in name:
        why = "contains a NUL byte"
    elif "\\" in name:
        why = "contains a backslash"
    elif name.startswith("/"):
        why = "is absolute"
    elif DRIVE_LETTER.match(name):
        why = "has a drive letter"
    else:
        parts = name.split("/")
        while parts and parts[0] == ".":  # "./pkg/x.py" as tar writes it
            parts.pop(0)
        if parts and parts[-1] == "":  # a directory name "pkg/"
            parts.pop()
        if not parts:
            why = "is empty"
        elif ".." in parts:
            why = "contains '..'"
        elif "" in parts or "." in parts:
            why = "has an empty or '.' component"
        elif any(p.lower() == ".git" for p in parts):
            why = "contains a .git component"
        else:
            return "/".join(parts)
    raise BadInput(f"unsafe {what} {name!r}: {why}")
