"""Archive sources: ``.whl``/``.zip`` read member by member, tarballs (sdists) unpacked once.

Every member name and link target is validated (no ``..``, absolute or drive-letter paths, no
``.git``, no link leaving the tree, nothing below a file or link) and the member count and total
uncompressed size are capped before anything is read (zip: from the central directory) or while
unpacking (tar: a gzip stream has no index), so a hostile archive is refused, naming the member,
and nothing is ever written outside the private scratch folder.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Iterable
from pathlib import Path

from vimesync.checkmodel import SourceInfo
from vimesync.errors import BadInput
from vimesync.safefs import remove_tree
from vimesync.source import (
    DRIVE_LETTER,
    EXECUTABLE,
    REGULAR,
    SYMLINK,
    DirectorySource,
    Entry,
    Limits,
    Source,
    safe_relpath,
)

ZIP_SUFFIXES = (".whl", ".zip")
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
# A single top-level folder of a .zip is stripped only when it looks like a project root
# (GitHub source zips, zipped sdists); a wheel's top level is the import package itself.
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO")


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
    if not target or target.startswith("/") or DRIVE_LETTER.match(target) or "\\" in target:
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
            remove_tree(self._tmp)  # never raises, however deep the tree
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
        remove_tree(self._tmp)  # never raises, however deep the tree
