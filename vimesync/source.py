"""Pinned engine sources: a git repository at a commit, a plain directory, or an archive.

A :class:`Source` lists its files and hands out their bytes; it is never modified. The caller
applies patches lazily: it materializes only the files a patch touches (``export(dest, only=...)``)
and parses the rest in place (``python_files()`` + ``read_many`` as the parser's loader).

- git (work tree or bare mirror): read only through objects (``ls-tree`` + ``cat-file --batch``),
  never the work tree, index or refs; blob ids double as free content hashes for the parse cache.
- directory: read in place; ``.git`` entries are ignored, symlinks are listed, never followed.
- archive: ``.whl``/``.zip`` are read member by member; tarballs (sdists) are unpacked once into a
  private scratch directory (a gzip stream has no random access). Member names and link targets are
  validated and sizes capped before anything is written.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from vimesync import git
from vimesync.checkmodel import SourceInfo
from vimesync.errors import BadInput, GitError
from vimesync.pycheck.model import PyFile

REGULAR = 0o100644
EXECUTABLE = 0o100755
SYMLINK = 0o120000
GITLINK = 0o160000

ZIP_SUFFIXES = (".whl", ".zip")
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
# A single top-level folder of a .zip is stripped only when it looks like a project root
# (GitHub source zips, zipped sdists); a wheel's top level is the import package itself.
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO")


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


def write_file(dest: Path, path: str, data: bytes, mode: int) -> Path:
    """Create ``dest/path`` (refusing unsafe paths and existing files) with git ``mode``."""
    target = dest / safe_relpath(path, what="path")
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == SYMLINK:
        os.symlink(os.fsdecode(data), target)
        return target
    perm = 0o755 if mode == EXECUTABLE else 0o644
    # O_EXCL also refuses an existing symlink, so nothing is ever written through one.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), perm)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(target, perm)  # umask must not drop the exec bit
    return target


_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_relpath(name: str, *, what: str = "member") -> str:
    """Normalize an archive/tree path to ``a/b/c``; raise BadInput for anything that could escape."""
    why = None
    if "\0" in name:
        why = "contains a NUL byte"
    elif "\\" in name:
        why = "contains a backslash"
    elif name.startswith("/"):
        why = "is absolute"
    elif _DRIVE.match(name):
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


def _scan(root: Path) -> dict[str, Entry]:
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
    return files


class DirectorySource(Source):
    def __init__(self, root: Path, *, kind: str = "directory", shown: Path | None = None) -> None:
        super().__init__(SourceInfo(kind=kind, path=str(shown or root), rev=None), _scan(root))
        self._root = root

    def _disk_path(self, path: str) -> Path | None:
        return self._root / path

    def read(self, path: str) -> bytes:
        e = self.entry(path)
        full = self._root / path
        if e.is_symlink:
            return os.fsencode(os.readlink(full))
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read()


# ---------------------------------------------------------------------------------------------
# archives


def _strip_prefix(names: Iterable[str], *, require_marker: bool) -> str:
    """``"top/"`` when every name lives under one folder ``top`` (and, if asked, it holds a project
    marker file); else ``""``."""
    tops = set()
    direct = set()
    for n in names:
        top, sep, rest = n.partition("/")
        if not sep:
            return ""  # a file at the archive root: nothing to strip
        tops.add(top)
        if "/" not in rest:
            direct.add(rest)
        if len(tops) > 1:
            return ""
    if len(tops) != 1:
        return ""
    if require_marker and not direct.intersection(_PROJECT_MARKERS):
        return ""
    return tops.pop() + "/"


def _check_link(archive: Path, member: str, target: str, prefix: str) -> None:
    """A link must stay inside the (stripped) tree: relative, and not climbing out of it."""
    if not target or target.startswith("/") or _DRIVE.match(target) or "\\" in target:
        raise BadInput(f"{archive}: unsafe member {member!r}: link to {target!r} points outside the archive")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(member), target))
    if resolved == ".." or resolved.startswith("../") or not (resolved + "/").startswith(prefix):
        raise BadInput(f"{archive}: unsafe member {member!r}: link to {target!r} points outside the archive")


def _check_parents(archive: Path, files: Collection[str]) -> None:
    """No member may live below another file or symlink (``link/x`` would be written through ``link``)."""
    for name in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files:
                raise BadInput(f"{archive}: unsafe member {name!r}: {parent!r} is a file or link, not a dir")


class ZipSource(Source):
    def __init__(self, path: Path, limits: Limits) -> None:
        try:
            self._zip = zipfile.ZipFile(path)
            infos = [i for i in self._zip.infolist() if not i.is_dir()]
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise BadInput(f"{path}: corrupt or unreadable zip archive: {exc}") from exc
        try:
            self._setup(path, infos, limits)
        except BaseException:
            self._zip.close()
            raise

    def _setup(self, path: Path, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
        if len(infos) > limits.max_members:
            raise BadInput(f"{path}: {len(infos)} members exceed the cap of {limits.max_members}")
        total = sum(i.file_size for i in infos)
        if total > limits.max_total_size:
            raise BadInput(f"{path}: {total} bytes uncompressed exceed the cap of {limits.max_total_size}")
        names: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            try:
                name = safe_relpath(info.filename)
            except BadInput as exc:
                raise BadInput(f"{path}: {exc}") from None
            if name in names:
                raise BadInput(f"{path}: duplicate member {info.filename!r}")
            names[name] = info
        _check_parents(path, names.keys())
        wheel = path.name.lower().endswith(".whl")
        prefix = "" if wheel else _strip_prefix(names, require_marker=True)
        files: dict[str, Entry] = {}
        self._members: dict[str, zipfile.ZipInfo] = {}
        for name, info in names.items():
            unix = info.external_attr >> 16
            if stat.S_ISLNK(unix):
                link = self._read_member(path, info).decode("utf-8", "replace")
                _check_link(path, info.filename, link, prefix)
                mode = SYMLINK
            else:
                mode = EXECUTABLE if unix & 0o100 else REGULAR
            rel = name[len(prefix) :]
            files[rel] = Entry(mode, info.file_size)
            self._members[rel] = info
        super().__init__(SourceInfo(kind="archive", path=str(path), rev=None), files)
        self._path = path
        if prefix:
            self.notes = (f"stripped the archive's top-level folder {prefix.rstrip('/')!r}",)

    def _read_member(self, path: Path, info: zipfile.ZipInfo) -> bytes:
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise BadInput(f"{path}: corrupt member {info.filename!r}: {exc}") from exc

    def read(self, path: str) -> bytes:
        self.entry(path)
        return self._read_member(self._path, self._members[path])

    def close(self) -> None:
        self._zip.close()


class TarSource(DirectorySource):
    """A tarball unpacked once (regular files only) into a private scratch folder."""

    def __init__(self, path: Path, limits: Limits, scratch: Path | None) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix="vimesync-src-", dir=scratch))
        try:
            unpacked, links, skipped, prefix = self._unpack(path, limits)
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        root = self._tmp / prefix.rstrip("/") if prefix else self._tmp
        super().__init__(root, kind="archive", shown=path)
        # Symlinks are never created on disk: their targets are kept here and served by read().
        self._links = {name[len(prefix) :]: target for name, target in links.items()}
        for name, target in self._links.items():
            self._files[name] = Entry(SYMLINK, len(target))
        notes = []
        if prefix:
            notes.append(f"stripped the archive's top-level folder {prefix.rstrip('/')!r}")
        if skipped:
            notes.append(f"ignored {skipped} device/fifo member(s)")
        self.notes = tuple(notes)

    def _unpack(self, path: Path, limits: Limits) -> tuple[set[str], dict[str, bytes], int, str]:
        files: set[str] = set()
        links: dict[str, bytes] = {}
        raw_links: dict[str, str] = {}
        dirs: set[str] = set()
        skipped = total = count = 0
        try:
            with tarfile.open(path, "r:*") as tf:
                for m in tf:
                    count += 1
                    if count > limits.max_members:
                        raise BadInput(f"{path}: more than {limits.max_members} members (cap)")
                    if m.isdir():
                        continue
                    if m.ischr() or m.isblk() or m.isfifo():
                        skipped += 1
                        continue
                    try:
                        name = safe_relpath(m.name)
                    except BadInput as exc:
                        raise BadInput(f"{path}: {exc}") from None
                    if name in files or name in links:
                        raise BadInput(f"{path}: duplicate member {m.name!r}")
                    self._claim(path, m.name, name, dirs, files, links)
                    if m.issym():
                        raw_links[name] = m.linkname
                        links[name] = os.fsencode(m.linkname)
                    elif m.islnk():
                        # A hard link becomes a copy of an earlier member: it counts toward the cap too.
                        src = m.linkname
                        while src.startswith("./"):
                            src = src[2:]
                        if src not in files:
                            why = f"hard link to unknown {m.linkname!r}"
                            raise BadInput(f"{path}: unsafe member {m.name!r}: {why}")
                        content = (self._tmp / src).read_bytes()
                        total += len(content)
                        if total > limits.max_total_size:
                            raise BadInput(
                                f"{path}: more than {limits.max_total_size} bytes uncompressed (cap)"
                            )
                        self._place(name).write_bytes(content)
                        files.add(name)
                    elif m.isreg():
                        total += m.size
                        if total > limits.max_total_size:
                            raise BadInput(
                                f"{path}: more than {limits.max_total_size} bytes uncompressed (cap)"
                            )
                        fh = tf.extractfile(m)
                        assert fh is not None
                        mode = 0o755 if m.mode & 0o100 else 0o644
                        fd = os.open(self._place(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                        with os.fdopen(fd, "wb") as out:
                            shutil.copyfileobj(fh, out, 1 << 20)
                        os.chmod(self._tmp / name, mode)
                        files.add(name)
                    else:
                        skipped += 1
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise BadInput(f"{path}: corrupt or unreadable archive: {exc}") from exc
        prefix = _strip_prefix(list(files) + list(links), require_marker=False)
        for name, target in raw_links.items():
            _check_link(path, name, target, prefix)
        return files, links, skipped, prefix

    @staticmethod
    def _claim(
        path: Path, member: str, name: str, dirs: set[str], files: set[str], links: dict[str, bytes]
    ) -> None:
        """Refuse, before writing it, a member below a file/link or in place of a folder."""
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files or parent in links:
                raise BadInput(f"{path}: unsafe member {member!r}: {parent!r} is a file or link, not a dir")
            dirs.add(parent)
        if name in dirs:
            raise BadInput(f"{path}: unsafe member {member!r}: a folder of that name exists")

    def _place(self, name: str) -> Path:
        target = self._tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def read(self, path: str) -> bytes:
        if path in self._links:
            return self._links[path]
        return super().read(path)

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------


def open_source(
    path: Path, rev: str | None = None, *, scratch: Path | None = None, limits: Limits | None = None
) -> Source:
    """Open a pinned source, detecting its kind; ``rev`` (any commit-ish) is for git sources only.

    Archives that must be unpacked go into a fresh folder under ``scratch`` (default: the system
    temp dir), removed by ``close()``. Raises BadInput/GitError with a message naming the problem.
    """
    limits = limits or Limits()
    if not path.exists() and not path.is_symlink():
        raise BadInput(f"{path}: no such file or directory")
    if path.is_dir():
        if git.repo_at(path) is not None:
            return GitSource(path, rev)
        if rev is not None:
            raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
        return DirectorySource(path)
    if rev is not None:
        raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
    if not path.is_file():
        raise BadInput(f"{path}: not a git repository, a directory or an archive")
    lower = path.name.lower()
    if lower.endswith(ZIP_SUFFIXES):
        return ZipSource(path, limits)
    if lower.endswith(TAR_SUFFIXES):
        return TarSource(path, limits, scratch)
    # An unusual name: trust the content.
    if zipfile.is_zipfile(path):
        return ZipSource(path, limits)
    try:
        is_tar = tarfile.is_tarfile(path)
    except OSError:
        is_tar = False
    if is_tar:
        return TarSource(path, limits, scratch)
    raise BadInput(
        f"{path}: not a git repository, a directory or an archive (.whl, .zip, .tar.gz, .tgz, .tar)"
    )
