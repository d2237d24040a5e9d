"""What a checkout holds, read one of two ways through one interface: its working tree (through
``safefs``) or one of its commits (through git objects: one ``ls-tree``, one ``cat-file --batch``;
nothing is checked out, so no filter, attribute or hook runs).

What a command reports *about a head* (its config, pins, series, patches, policy) is what the head
commit holds: an uncommitted ``patches/series`` must not make the report of a 14-patch head say
"All 1 patch apply". The loaders (:mod:`vimesync.config`, :mod:`vimesync.patches.series`,
:mod:`vimesync.upstream.policy`) take a :class:`Reader`; a :class:`CommitReader` answers for the
head's files under the checkout's own paths, so a file is named in an error where the user knows
it, a location a file names relative to itself (``../vllm.git``) lands where it would in the
checkout, and a file kept in ``ci/`` may name ``../pins/x.toml`` inside the repository.

Both readers apply the same rules and say the same words: regular files only, no symbolic link
followed (at the file or at a folder on the way), a size bound on every read, nothing of a file's
content in an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from vimesync import git
from vimesync.errors import ConfigError
from vimesync.safefs import (
    MAX_CONFIG_BYTES,
    Missing,
    NotARegularFile,
    find_root,
    input_kind,
    lexical,
    read_input,
    stat_input,
)

Kind = Literal["file", "dir", "missing"]
MAX_ENTRIES = 500_000  # of a commit's listing (files and folders): a larger tree is not a checkout we read


class Reader(Protocol):
    """Files of a checkout, by their path in it (absolute, as the user knows it)."""

    def read(self, path: Path, *, max_bytes: int, root: Path | None = None, what: str = "file") -> bytes:
        """At most ``max_bytes`` of a regular file (ConfigError naming it otherwise); ``root``: the
        folder below which no symbolic link is followed (default: the repository's root)."""
        ...

    def read_text(
        self, path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, root: Path | None = None
    ) -> str: ...

    def kind(self, path: Path, *, root: Path | None = None) -> Kind:
        """What ``path`` is; NotARegularFile for a symbolic link or anything but a file or folder."""
        ...

    def identity(self, path: Path, *, root: Path | None = None) -> tuple[object, int]:
        """What makes two paths one file (its device and inode, or its place in the commit), and
        its size: a regular file's, without reading it."""
        ...

    def repository_root(self, path: Path) -> Path:
        """The root of the repository holding ``path``: files a config names must stay below it."""
        ...

    def where(self) -> str:
        """What is read, for a message: "the working tree", "commit 1a2b3c4d5e6f"."""
        ...


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(where, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None


class WorkTreeReader:
    """The files as they are on disk, through ``safefs``."""

    def read(self, path: Path, *, max_bytes: int, root: Path | None = None, what: str = "file") -> bytes:
        return read_input(path, max_bytes=max_bytes, root=root, what=what)

    def read_text(self, path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, root: Path | None = None) -> str:
        return _text(self.read(path, max_bytes=max_bytes, root=root), str(path))

    def kind(self, path: Path, *, root: Path | None = None) -> Kind:
        found = input_kind(path, root=root)
        assert found in ("file", "dir", "missing")
        return found  # type: ignore[return-value]

    def identity(self, path: Path, *, root: Path | None = None) -> tuple[object, int]:
        st = stat_input(path, root=root)
        return (st.st_dev, st.st_ino), st.st_size

    def repository_root(self, path: Path) -> Path:
        return find_root(path)

    def where(self) -> str:
        return "the working tree"


WORKTREE = WorkTreeReader()  # the default of every loader: what the checkout holds on disk


class RecordingReader:
    """A reader that keeps the blob id of every file read through it, as it was read: what a
    result worked out from these files rests on, compared later with what another reader holds
    (``vimesync sync`` shares its walk with the head only when the head holds the same bytes)."""

    def __init__(self, inner: Reader = WORKTREE) -> None:
        self.inner = inner
        self._read: dict[Path, str | None] = {}

    def read(self, path: Path, *, max_bytes: int, root: Path | None = None, what: str = "file") -> bytes:
        data = self.inner.read(path, max_bytes=max_bytes, root=root, what=what)
        oid = git.blob_oid(data)
        key = lexical(path)
        if self._read.setdefault(key, oid) != oid:
            self._read[key] = None  # read twice, two contents: it vouches for neither
        return data

    def read_text(self, path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, root: Path | None = None) -> str:
        return _text(self.read(path, max_bytes=max_bytes, root=root), str(path))

    def blob_read(self, path: Path) -> str | None:
        """The blob id of ``path`` as it was read (None: not read, or read with two contents)."""
        return self._read.get(lexical(path))

    def kind(self, path: Path, *, root: Path | None = None) -> Kind:
        return self.inner.kind(path, root=root)

    def identity(self, path: Path, *, root: Path | None = None) -> tuple[object, int]:
        return self.inner.identity(path, root=root)

    def repository_root(self, path: Path) -> Path:
        return self.inner.repository_root(path)

    def where(self) -> str:
        return self.inner.where()


@dataclass(frozen=True)
class _TreeItem:
    mode: int
    oid: str
    size: int  # -1 for a folder


@dataclass(eq=False)
class CommitReader:
    """The files of ``commit`` in the repository ``repo``, named under ``root`` (the checkout's
    work tree, where the same files would lie on disk). A path outside ``root`` is no file of the
    commit: it is read where it is (a flag may name a series anywhere; what the config names
    must stay inside the repository, which the config's loader checks first). Use it as a
    context manager, or close it: it keeps one ``git cat-file --batch`` for its reads."""

    repo: Path
    commit: str  # a full sha
    root: Path
    _listing: dict[str, _TreeItem] | None = field(default=None, repr=False)
    _cat: git.CatFile | None = field(default=None, repr=False)
    # every path of the commit asked about (read, kind, identity; found or not), and whether a
    # path outside it was: what a result worked out through this reader rests on
    asked: set[str] = field(default_factory=set, repr=False)
    asked_outside: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.root = lexical(self.root)

    # --- the listing -------------------------------------------------------------------------
    def _entries(self) -> dict[str, _TreeItem]:
        if self._listing is None:
            out = git.run(self.repo, ["ls-tree", "-r", "-t", "-z", "--long", "--full-tree", self.commit])
            listing: dict[str, _TreeItem] = {}
            for e in git.parse_ls_tree(out):
                listing[e.path] = _TreeItem(e.mode, e.oid, e.size)
                if len(listing) > MAX_ENTRIES:
                    raise ConfigError(
                        str(self.root), f"{self.where()} holds more than {MAX_ENTRIES:,} files and folders"
                    )
            self._listing = listing
        return self._listing

    def _rel(self, path: Path, where: str) -> str:
        here = lexical(path)
        if here == self.root:
            return ""
        if "\0" in str(path):
            raise NotARegularFile(where, "a NUL byte in the path")
        return here.relative_to(self.root).as_posix()

    def _outside(self, path: Path) -> bool:
        outside = not lexical(path).is_relative_to(self.root)
        self.asked_outside |= outside
        return outside

    def state(self, rel: str) -> str:
        """What the commit holds at ``rel`` as one comparable word: "" (nothing), a folder's
        mode, else the mode and the object id."""
        got = self._entries().get(rel)
        if got is None:
            return ""
        return f"{got.mode:o}" if got.mode == git.MODE_DIR else f"{got.mode:o} {got.oid}"

    def _entry(self, path: Path, where: str) -> _TreeItem | None:
        """The entry at ``path``; None when absent. Every folder on the way must be a folder."""
        rel = self._rel(path, where)
        if not rel:
            return _TreeItem(git.MODE_DIR, "", -1)
        self.asked.add(rel)
        entries = self._entries()
        parts = rel.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            got = entries.get(folder)
            if got is None:
                raise Missing(where, "no such file")
            if got.mode != git.MODE_DIR:
                kind = "a symbolic link" if got.mode == git.MODE_LINK else "a file"
                raise NotARegularFile(
                    where, f"refusing to follow {self.root / folder}: it is {kind} inside {self.root}"
                )
        return entries.get(rel)

    def _blob(self, path: Path, where: str) -> _TreeItem:
        got = self._entry(path, where)
        if got is None:
            raise Missing(where, "no such file")
        if got.mode == git.MODE_LINK:
            raise NotARegularFile(where, "refusing to follow a symbolic link")
        if got.mode == git.MODE_DIR:
            raise NotARegularFile(where, "is a directory, not a regular file", is_dir=True)
        if got.mode not in (git.MODE_FILE, git.MODE_EXEC):
            raise NotARegularFile(where, "is a submodule, not a regular file")
        return got

    # --- the interface -----------------------------------------------------------------------
    def read(self, path: Path, *, max_bytes: int, root: Path | None = None, what: str = "file") -> bytes:
        if self._outside(path):
            return WORKTREE.read(path, max_bytes=max_bytes, root=root, what=what)
        where = str(path)
        entry = self._blob(path, where)
        if entry.size > max_bytes:
            raise ConfigError(where, f"{what} is over the {max_bytes}-byte limit")
        if self._cat is None:
            self._cat = git.CatFile(self.repo)
        return self._cat.read(entry.oid, max_size=max_bytes)

    def read_text(self, path: Path, *, max_bytes: int = MAX_CONFIG_BYTES, root: Path | None = None) -> str:
        return _text(self.read(path, max_bytes=max_bytes, root=root), str(path))

    def kind(self, path: Path, *, root: Path | None = None) -> Kind:
        if self._outside(path):
            return WORKTREE.kind(path, root=root)
        where = str(path)
        try:
            got = self._entry(path, where)
        except Missing:
            return "missing"
        if got is None:
            return "missing"
        if got.mode == git.MODE_DIR:
            return "dir"
        if got.mode in (git.MODE_FILE, git.MODE_EXEC):
            return "file"
        if got.mode == git.MODE_LINK:
            raise NotARegularFile(where, "refusing to follow a symbolic link")
        raise NotARegularFile(where, "is a submodule, not a regular file or folder")

    def identity(self, path: Path, *, root: Path | None = None) -> tuple[object, int]:
        if self._outside(path):
            return WORKTREE.identity(path, root=root)
        return self._rel(path, str(path)), self._blob(path, str(path)).size

    def repository_root(self, path: Path) -> Path:
        inside = lexical(path).is_relative_to(self.root)  # a place, not a file asked about
        return self.root if inside else WORKTREE.repository_root(path)

    def where(self) -> str:
        return f"commit {self.commit[:12]}"

    def close(self) -> None:
        if self._cat is not None:
            self._cat.close()
            self._cat = None

    def __enter__(self) -> CommitReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def commit_reader(repo: Path, commit: str, root: Path) -> Iterator[CommitReader]:
    reader = CommitReader(repo, commit, root)
    try:
        yield reader
    finally:
        reader.close()
