"""Pinned engine sources: a git repository at a commit, a plain directory, or an archive.

A :class:`Source` lists its files and hands out their bytes; it is never modified. The caller
applies patches lazily: it materializes only the files a patch touches (``export(dest, only=...)``)
and parses the rest in place (``python_files()`` + ``read_many`` as the parser's loader).

- git (work tree or bare mirror): read only through objects (``ls-tree`` + ``cat-file --batch``),
  never the work tree, index or refs; blob ids double as free content hashes for the parse cache.
- directory: read in place; ``.git`` entries are ignored, symlinks are listed, never followed.
- archive (``vimesync.archives``): ``.whl``/``.zip`` are read member by member; tarballs (sdists)
  are unpacked once into a private scratch directory. Member names and link targets are validated
  and sizes capped before anything is written.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from vimesync import git, nofollow
from vimesync.checkmodel import SourceInfo
from vimesync.errors import BadInput, GitError
from vimesync.pycheck.model import PyFile
from vimesync.safefs import pseudo_area

REGULAR = 0o100644
EXECUTABLE = 0o100755
SYMLINK = 0o120000
GITLINK = 0o160000


@dataclass(frozen=True)
class Entry:
    """One file of a source: ``mode`` as git spells it, ``size`` in bytes, ``oid`` for git sources."""

    mode: int  # REGULAR, EXECUTABLE or SYMLINK
    size: int
    oid: str | None = None

    @property
    def is_symlink(self) -> bool:
        return self.mode == SYMLINK


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
        self._files = files
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
        out = []
        for path, e in self._files.items():
            if path.endswith(".py") and not e.is_symlink and path not in exclude:
                out.append(PyFile(path=path, size=e.size, oid=e.oid, file=self._disk_path(path)))
        return out

    def _disk_path(self, path: str) -> Path | None:
        return None

    def export(self, dest: Path, *, only: Iterable[str] | None = None, skip: Collection[str] = ()) -> int:
        """Write files (all, or ``only``), minus ``skip``, under ``dest`` with their modes; symlinks as
        symlinks. Never overwrites and never writes outside ``dest``. Returns the number written."""
        paths = [p for p in (self._files if only is None else only) if p not in skip]
        for p in paths:
            self.entry(p)  # unknown path -> BadInput before writing anything
        dest.mkdir(parents=True, exist_ok=True)
        count = 0
        for path, data in self.read_many(paths):
            write_file(dest, path, data, self._files[path].mode)
            count += 1
        return count

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
        if mode == SYMLINK:
            nofollow.symlink_new(dest, rel, data)
        else:
            nofollow.write_new(dest, rel, data, executable=mode == EXECUTABLE)
    except nofollow.NotInTree:
        raise BadInput(f"{dest}: cannot write {rel!r}: a parent is a file or symbolic link") from None


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


# ---------------------------------------------------------------------------------------------
# git


class GitSource(Source):
    def __init__(self, path: Path, rev: str | None) -> None:
        # git runs in the user's path (work tree root or bare repo), so its messages name that path.
        sha = git.resolve(path, rev or "HEAD")
        files: dict[str, Entry] = {}
        submodules = 0
        for e in git.ls_tree(path, sha):
            if e.mode == GITLINK:
                submodules += 1
            elif e.kind == "blob":
                if e.path in files:  # a tree with a duplicate entry name (git never writes one)
                    raise BadInput(f"{path}: {e.path!r} appears twice in the tree of {sha}")
                mode = e.mode if e.mode in (EXECUTABLE, SYMLINK) else REGULAR
                files[e.path] = Entry(mode=mode, size=e.size, oid=e.oid)
        super().__init__(SourceInfo(kind="git", path=str(path), rev=sha), files)
        notes = []
        if rev is None:
            notes.append(f"no revision given: using HEAD ({sha})")
        if submodules:
            notes.append(f"skipped {submodules} submodule(s): gitlinks have no content in this tree")
        self.notes = tuple(notes)
        self._repo = path
        self._cat: git.CatFile | None = None

    def read(self, path: str) -> bytes:
        oid = self.entry(path).oid
        assert oid is not None
        if self._cat is None:
            self._cat = git.CatFile(self._repo)
        return self._cat.read(oid)

    def read_many(self, paths: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        paths = list(paths)
        oids = [self.entry(p).oid or "" for p in paths]
        for path, (_, data) in zip(paths, git.cat_blobs(self._repo, oids), strict=True):
            yield path, data

    def close(self) -> None:
        if self._cat is not None:
            self._cat.close()
            self._cat = None


# ---------------------------------------------------------------------------------------------
# directory (also the unpacked form of a tarball)


def _scan(root: Path, max_files: int) -> dict[str, Entry]:
    files: dict[str, Entry] = {}
    stack = [("", os.fspath(root))]
    while stack:
        prefix, folder = stack.pop()
        with os.scandir(folder) as it:
            for d in it:
                if d.name == ".git":
                    continue
                rel = prefix + d.name
                st = d.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    stack.append((rel + "/", d.path))
                elif stat.S_ISLNK(st.st_mode):
                    files[rel] = Entry(SYMLINK, len(os.fsencode(os.readlink(d.path))))
                elif stat.S_ISREG(st.st_mode):
                    files[rel] = Entry(EXECUTABLE if st.st_mode & 0o100 else REGULAR, st.st_size)
                # sockets, fifos, devices: not part of a source tree
                if len(files) > max_files:
                    raise BadInput(f"{root}: holds over {max_files:,} files; not an engine source tree")
    return files


class DirectorySource(Source):
    def __init__(
        self, root: Path, *, kind: str = "directory", shown: Path | None = None, max_files: int = 200_000
    ) -> None:
        info = SourceInfo(kind=kind, path=str(shown or root), rev=None)
        super().__init__(info, _scan(root, max_files))
        self._root = root

    def _disk_path(self, path: str) -> Path | None:
        # Read in place by the parser (O_NOFOLLOW on the file); the scan listed no path through
        # a symlink, so no leading component is one unless the folder changes under us.
        return self._root / path

    def read(self, path: str) -> bytes:
        """Walked from the root without following any symlink (the scan never listed a path
        through one; this holds even if the folder changed since)."""
        e = self.entry(path)
        got = nofollow.read_entry(self._root, path)
        if got is None or stat.S_IFMT(got[0].st_mode) != (stat.S_IFLNK if e.is_symlink else stat.S_IFREG):
            raise BadInput(f"{self.info.path}: {path!r} changed while being read")
        return got[1]


# ---------------------------------------------------------------------------------------------


def open_source(
    path: Path, rev: str | None = None, *, scratch: Path | None = None, limits: Limits | None = None
) -> Source:
    """Open a pinned source, detecting its kind; ``rev`` (any commit-ish) is for git sources only.

    Archives that must be unpacked go into a fresh folder under ``scratch`` (default: the system
    temp dir), removed by ``close()``. Raises BadInput/GitError with a message naming the problem.
    """
    limits = limits or Limits()
    area = pseudo_area(path, os.path.realpath(path))
    if area is not None:
        raise BadInput(f"{path}: refusing a source under {area}: not a source tree")
    if not path.exists() and not path.is_symlink():
        raise BadInput(f"{path}: no such file or directory")
    if path.is_dir():
        if git.repo_at(path) is not None:
            return GitSource(path, rev)
        if rev is not None:
            raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
        return DirectorySource(path, max_files=limits.max_members)
    if rev is not None:
        raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
    if not path.is_file():
        raise BadInput(f"{path}: not a git repository, a directory or an archive")
    from vimesync import archives  # archives build on the classes above

    lower = path.name.lower()
    if lower.endswith(archives.ZIP_SUFFIXES):
        return archives.ZipSource(path, limits)
    if lower.endswith(archives.TAR_SUFFIXES):
        return archives.TarSource(path, limits, scratch)
    # An unusual name: trust the content.
    if zipfile.is_zipfile(path):
        return archives.ZipSource(path, limits)
    try:
        is_tar = tarfile.is_tarfile(path)
    except OSError:
        is_tar = False
    if is_tar:
        return archives.TarSource(path, limits, scratch)
    raise BadInput(
        f"{path}: not a git repository, a directory or an archive (.whl, .zip, .tar.gz, .tgz, .tar)"
    )
