"""Archive sources: ``.whl``/``.zip`` read member by member, tarballs (sdists) unpacked once.

Every member name and link target is validated (no ``..``, absolute or drive-letter paths, no
``.git``, no link leaving the tree, nothing below a file or link) and the member count and total
uncompressed size are capped before anything is read (zip: from the central directory) or while
unpacking (tar: a gzip stream has no index), so a hostile archive is refused, naming the member,
and nothing is ever written outside the private scratch folder.
"""

from __future__ import annotations

import lzma
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from vimesync.errors import BadInput
from vimesync.git import MODE_EXEC, MODE_FILE, MODE_LINK
from vimesync.safefs import excerpt, remove_tree
from vimesync.sources.directory import DirectorySource
from vimesync.sources.model import (
    DRIVE_LETTER,
    Entry,
    Limits,
    Source,
    SourceInfo,
    safe_relpath,
)

ZIP_SUFFIXES = (".whl", ".zip")
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
# A single top-level folder of a .zip is stripped only when it looks like a project root
# (GitHub source zips, zipped sdists); a wheel's top level is the import package itself.
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO")
# One zip member is read into memory whole (to hash, parse, patch or export it): a member
# announcing more is refused when read (the parser skips anything over 10 MiB unread).
MAX_MEMBER_READ = 256 << 20
_CHUNK = 1 << 20  # what an export copies at a time


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


MAX_NAME_LENGTH = 2048  # characters of a member name: it must fit below a scratch folder
MAX_NAME_DEPTH = 128  # folders in a member name


def _member_name(archive: Path, raw: str) -> str:
    """The safe relative name of a member, or BadInput (before anything is written for it)."""
    if len(raw) > MAX_NAME_LENGTH or raw.count("/") > MAX_NAME_DEPTH:
        shown = raw[:60] + "..."
        why = f"more than {MAX_NAME_LENGTH} characters or {MAX_NAME_DEPTH} folders deep"
        raise BadInput(f"{archive}: unsafe member {shown!r}: {why}")
    try:
        return safe_relpath(raw)
    except BadInput as exc:
        raise BadInput(f"{archive}: {exc}") from None


_MAX_LINK_TARGET = 4096  # bytes, PATH_MAX
_MAX_LINK_HOPS = 40  # links followed to resolve one target (the kernel's limit)
_MAX_LINK_STEPS = 1_000_000  # path components walked to check all of an archive's links


def _check_links(archive: Path, links: dict[str, str], prefix: str) -> None:
    """Every link must stay inside the (stripped) tree, resolved the way the kernel will once
    the tree is on disk: component by component, through the archive's own links. A lexical
    check of each target alone misses chains (``l1 -> .``, ``l2 -> l1/..`` climbs out).

    ``links`` maps member names (with ``prefix``) to targets; members never live below a link
    (checked before), so a link's own folder is a real folder.
    """
    resolver = _LinkResolver(archive, links, prefix)
    for name in resolver.tree:
        if resolver.resolve(name, 0) is None:
            raise resolver.unsafe(name, "points outside the archive (or loops)")


class _LinkResolver:
    """An archive's links resolved through each other, each once, within a bound on the work."""

    def __init__(self, archive: Path, links: dict[str, str], prefix: str) -> None:
        self.archive = archive
        self.prefix = prefix
        self.tree = {name[len(prefix) :]: target for name, target in links.items()}
        self.done: dict[
            str, list[str] | None
        ] = {}  # link -> the folders of its resolved path (None: outside)
        self.steps = 0

    def unsafe(self, name: str, why: str) -> BadInput:
        target = excerpt(self.tree[name], 100)
        return BadInput(f"{self.archive}: unsafe member {self.prefix + name!r}: link to {target} {why}")

    def resolve(self, name: str, depth: int) -> list[str] | None:
        """The folders of the path link ``name`` resolves to (``depth`` links deep), or None when
        it leads outside the tree or loops."""
        if name in self.done:
            return self.done[name]
        if depth > _MAX_LINK_HOPS:
            raise self.unsafe(name, f"goes through more than {_MAX_LINK_HOPS} links")
        target = self.tree[name]
        if not target or target.startswith("/") or DRIVE_LETTER.match(target) or "\\" in target:
            self.done[name] = None
            return None
        if len(target) > _MAX_LINK_TARGET:
            raise self.unsafe(name, f"is longer than {_MAX_LINK_TARGET} bytes")
        self.done[name] = None  # a link met again while resolving itself is a loop: treated as outside
        # ``path`` holds each prefix of the path walked so far: "a", "a/b", ...
        folder = posixpath.dirname(name)
        path: list[str] = []
        for part in folder.split("/") if folder else ():
            path.append(f"{path[-1]}/{part}" if path else part)
        resolved = self._walk(target, path, depth)
        if resolved is not None:
            self.done[name] = resolved
        return resolved

    def _walk(self, target: str, path: list[str], depth: int) -> list[str] | None:
        """``path`` (the link's folder) followed by ``target``, component by component."""
        for part in target.split("/"):
            self.steps += 1
            if self.steps > _MAX_LINK_STEPS:
                raise BadInput(
                    f"{self.archive}: link targets too complex to check (over {_MAX_LINK_STEPS} steps)"
                )
            if part in ("", "."):
                continue
            if part == "..":
                if not path:
                    return None
                path.pop()
                continue
            path.append(f"{path[-1]}/{part}" if path else part)
            if path[-1] in self.tree:
                through = self.resolve(path[-1], depth + 1)
                if through is None:
                    return None
                path = list(through)
        return path


def _check_parents(archive: Path, files: Collection[str]) -> None:
    """No member may live below another file or symlink (``link/x`` would be written through ``link``)."""
    for name in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in files:
                raise BadInput(f"{archive}: unsafe member {name!r}: {parent!r} is a file or link, not a dir")


_MAX_TRAILER = 16 << 20  # bytes after the end-of-archive block (tar pads to its record size)


def _check_end(archive: Path, tf: tarfile.TarFile) -> None:
    """After the last member: the end-of-archive block must be there, and a compressed stream
    must end cleanly (gzip/xz/bz2 check their CRC there), so a truncated or corrupted tarball
    is an error, never a silently shorter source. ``tarfile`` itself stops quietly at a missing
    header and never reads a stream's trailer."""
    fileobj = tf.fileobj
    assert fileobj is not None
    fileobj.seek(tf.offset)
    block = fileobj.read(tarfile.BLOCKSIZE)
    if len(block) != tarfile.BLOCKSIZE or block.count(0) != tarfile.BLOCKSIZE:
        raise BadInput(
            f"{archive}: corrupt or truncated archive: no end-of-archive block after the last member"
        )
    drained = 0
    while chunk := fileobj.read(1 << 20):
        drained += len(chunk)
        if drained > _MAX_TRAILER:
            raise BadInput(f"{archive}: more than {_MAX_TRAILER >> 20} MiB after the end of the archive")


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
            name = _member_name(path, info.filename)
            if name in names:
                raise BadInput(f"{path}: duplicate member {info.filename!r}")
            names[name] = info
        _check_parents(path, names.keys())
        wheel = path.name.lower().endswith(".whl")
        prefix = "" if wheel else _strip_prefix(names, require_marker=True)
        files: dict[str, Entry] = {}
        links: dict[str, str] = {}
        self._members: dict[str, zipfile.ZipInfo] = {}
        for name, info in names.items():
            unix = info.external_attr >> 16
            if stat.S_ISLNK(unix):
                if info.file_size > _MAX_LINK_TARGET:
                    raise BadInput(f"{path}: unsafe member {info.filename!r}: link target over 4096 bytes")
                links[name] = self._read_member(path, info).decode("utf-8", "replace")
                mode = MODE_LINK
            else:
                mode = MODE_EXEC if unix & 0o100 else MODE_FILE
            rel = name[len(prefix) :]
            files[rel] = Entry(mode, info.file_size)
            self._members[rel] = info
        _check_links(path, links, prefix)
        super().__init__(SourceInfo(kind="archive", path=str(path), rev=None), files)
        self._path = path
        if prefix:
            self.notes = (f"stripped the archive's top-level folder {prefix.rstrip('/')!r}",)

    def _read_member(self, path: Path, info: zipfile.ZipInfo) -> bytes:
        if info.file_size > MAX_MEMBER_READ:
            raise BadInput(
                f"{path}: member {info.filename!r} is {info.file_size} bytes, "
                f"over the {MAX_MEMBER_READ >> 20} MiB cap for one file"
            )
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise BadInput(f"{path}: corrupt member {info.filename!r}: {exc}") from exc

    def read(self, path: str) -> bytes:
        self.entry(path)
        return self._read_member(self._path, self._members[path])

    def _streams(self, path: str) -> bool:
        # Every regular member: an engine wheel holds shared objects of hundreds of MiB that no
        # patch touches, exported without ever being held whole (the archive's total is capped).
        return self._files[path].mode != MODE_LINK

    def _chunks(self, path: str) -> Iterator[bytes]:
        info = self._members[path]
        try:
            with self._zip.open(info) as fh:
                while chunk := fh.read(_CHUNK):
                    yield chunk
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError) as exc:
            raise BadInput(f"{self._path}: corrupt member {info.filename!r}: {exc}") from exc

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
            self._files[name] = Entry(MODE_LINK, len(target))
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
                    if m.issparse():
                        # Source trees have none; a few KB can announce gigabytes of holes
                        # that extractfile() would write out as zeros.
                        raise BadInput(f"{path}: unsafe member {m.name!r}: a sparse file")
                    name = _member_name(path, m.name)
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
                        total += (self._tmp / src).stat().st_size
                        if total > limits.max_total_size:
                            raise BadInput(
                                f"{path}: more than {limits.max_total_size} bytes uncompressed (cap)"
                            )
                        shutil.copyfile(self._tmp / src, self._place(name))  # streamed, not read whole
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
                _check_end(path, tf)
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
            raise BadInput(f"{path}: corrupt or unreadable archive: {exc}") from exc
        prefix = _strip_prefix(list(files) + list(links), require_marker=False)
        _check_links(path, raw_links, prefix)
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
