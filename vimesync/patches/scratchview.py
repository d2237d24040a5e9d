"""The tree a patch meets: the scratch directory over an optional lazy source.

A :class:`Provider` answers for paths not yet in the scratch directory: ``entry(path) -> (bytes,
mode) | None`` (mode 0o100644/0o100755, 0o120000 for a symlink whose bytes are its target,
0o040000 for a directory) and ``files_under(folder)`` (every file and symlink below a folder).
Once the tree writes or deletes a path, the scratch directory is the truth for it; a folder of
the source exists as long as one of its files does (git has no empty folders), so a folder every
patch so far has emptied is gone, and one that still holds an untouched file is not. Over a
provider the scratch directory starts empty and holds only what the tree wrote and the folders
above it, so a path it never wrote at or below is not looked for there. The default (no
provider) is the scratch directory alone: the full tree.

Every read walks the path one component at a time from the root with ``O_NOFOLLOW`` folder
descriptors (``vimesync.nofollow``): nothing is read through a symlink, and a lookup beyond one
is refused (:class:`Unsafe`). Checking (``scratchcheck``) and writing (``scratchwrite``) build on
:class:`ScratchView`; :class:`vimesync.patches.tree.ScratchTree` is all three.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from vimesync import nofollow
from vimesync.git import MODE_DIR, MODE_EXEC, MODE_FILE, MODE_LINK
from vimesync.patches.model import ApplyMode

S_IFMT = 0o170000


class Refused(Exception):
    """A check failed; the message is the reason (turned into a file-level HunkFailure)."""


class MissingFile(Refused):
    """The file the patch changes does not exist."""


class Unsafe(Refused):
    """The patch would read or write through a symlink: not a failed hunk but a hostile or broken
    patch, refused as bad input (PatchError, exit 2) like ``..`` and ``.git`` paths."""


def mode_kind(mode: int) -> int:
    """The file type bits of a git mode (regular file, symlink, directory, gitlink)."""
    return mode & S_IFMT


def read_entry(root: Path, rel: str) -> tuple[bytes, int] | None:
    """(bytes, mode) of ``root/rel``, walked without following any symlink (a path below a symlink
    or a file does not exist: None); a symlink's bytes are its target."""
    try:
        got = nofollow.read_entry(root, rel)
    except OSError as exc:
        raise Refused(f"{rel}: not a regular file") if exc.errno == errno.EINVAL else exc from None
    if got is None:
        return None
    st, data = got
    if stat.S_ISLNK(st.st_mode):
        return data, MODE_LINK
    if stat.S_ISDIR(st.st_mode):
        return b"", MODE_DIR
    return data, MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE


@dataclass(frozen=True)
class Provider:
    """Read-only answers about the original tree (see the module doc)."""

    entry: Callable[[str], tuple[bytes, int] | None]
    files_under: Callable[[str], Iterable[str]]


def directory_provider(source: Path) -> Provider:
    """A provider that reads original files from another directory (a plain-directory source)."""
    top = Path(os.path.abspath(source))

    def files_under(folder: str) -> Iterable[str]:
        if read_entry(top, folder) != (b"", MODE_DIR):
            return
        for dirpath, dirnames, filenames in os.walk(top / folder):  # never descends into a symlink
            rel = os.path.relpath(dirpath, top).replace(os.sep, "/")
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                yield f"{rel}/{name}"

    return Provider(entry=lambda rel: read_entry(top, rel), files_under=files_under)


class ScratchView:
    """A scratch directory that patches are applied to, plus an optional lazy provider: what a
    patch reads (see the module doc)."""

    def __init__(
        self,
        root: Path,
        provider: Provider | None = None,
        *,
        all_hunks: bool = False,
        mode: ApplyMode | None = None,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.provider = provider
        if provider is not None and os.path.isdir(self.root) and os.listdir(self.root):
            raise ValueError(f"{self.root}: a scratch tree over a provider starts empty")
        self.all_hunks = all_hunks  # try a file's hunks after its first failure (--keep-going)
        self.mode = mode or ApplyMode()  # git apply's semantics, or GNU patch's (fuzz, --forward)
        self._written: set[str] = set()  # paths whose truth is now the scratch directory
        self._written_below: set[str] = set()  # the folders holding a path of _written
        self._removing: set[str] = set()  # paths the patch being applied deletes or renames away
        self._components: dict[str, int | None] = {}  # leading directories seen by this check
        self.writers: dict[str, str] = {}  # path -> the last patch that wrote or deleted it
        try:
            self._name_max = os.pathconf(self.root, "PC_NAME_MAX")
        except (OSError, ValueError):
            self._name_max = 255

    def _disk(self, rel: str) -> tuple[bytes, int] | None:
        if self.provider is not None and rel not in self._written and rel not in self._written_below:
            return None  # over a provider the scratch directory holds only what this tree wrote
        return read_entry(self.root, rel)

    def _entry(self, rel: str) -> tuple[bytes, int] | None:
        """The current (bytes, mode) of ``rel`` in the tree the patches see, assuming its leading
        components are folders. The scratch directory only holds what patches wrote, so it
        wins; else the source, where a folder exists while one of its files is still there."""
        disk = self._disk(rel)
        if disk is not None or self.provider is None:
            return disk
        got = self.provider.entry(rel)
        if got is None:
            return None
        if got[1] != MODE_DIR:
            return None if rel in self._written else got
        return got if self._source_files_left(rel) else None

    def _source_files_left(self, folder: str) -> bool:
        """Does the source still hold a file below ``folder`` that no patch wrote or deleted?"""
        assert self.provider is not None
        if folder not in self._written_below:
            return True  # nothing below was touched, and a source folder holds files
        return any(p not in self._written for p in self.provider.files_under(folder))

    def _component(self, rel: str) -> int | None:
        """The kind of a leading component (None: missing). Cached while one patch is checked
        (nothing on disk changes until it is written)."""
        if rel not in self._components:
            got = self._entry(rel)
            self._components[rel] = None if got is None else got[1]
        return self._components[rel]

    def symlink_prefix(self, rel: str) -> str | None:
        """The first leading component of ``rel`` that is a symlink (or not a directory)."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            kind = self._component(prefix)
            if kind is None:
                return None
            if kind != MODE_DIR:
                return prefix
        return None

    def _follows_into_a_loop(self, rel: str) -> bool:
        """Would ``lstat(rel)`` fail with ELOOP? git's check_to_create lstats a new path before
        anything is written, following symlinks in its leading components, and fails on any
        error but "missing". Resolved inside the tree only: a link leaving it (absolute, or above
        the root) is never followed here, and counts as leading nowhere."""
        todo = rel.split("/")
        resolved: list[str] = []
        hops = 0
        while todo:
            name = todo.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not resolved:
                    return False
                resolved.pop()
                continue
            path = "/".join([*resolved, name])
            kind = self._component(path)
            if kind is None or not todo:
                return False
            if kind == MODE_DIR:
                resolved.append(name)
            elif kind == MODE_LINK:
                hops += 1
                got = self._entry(path)
                target = got[0].split(b"\0", 1)[0] if got else b""
                if hops > 40:  # Linux's MAXSYMLINKS
                    return True
                if target.startswith(b"/"):
                    return False
                todo = os.fsdecode(target).split("/") + todo
            else:
                return False  # ENOTDIR: a missing file as far as git is concerned
        return False

    def lookup(self, rel: str) -> tuple[bytes, int] | None:
        """The current (bytes, mode) of ``rel``; Refused when a component is a symlink."""
        blocked = self.symlink_prefix(rel)
        if blocked is not None and self._component(blocked) != MODE_LINK:
            raise Refused(f"{rel}: Not a directory ('{blocked}' is a file)")
        if blocked is not None:
            raise Unsafe(f"reading from '{rel}' beyond a symbolic link ('{blocked}')")
        return self._entry(rel)

    def current(self, rel: str) -> tuple[bytes, int] | None:
        """The (bytes, mode) of ``rel`` in the tree as the next patch meets it; None when missing or
        out of reach (beyond a symlink or a file)."""
        self._components = {}
        try:
            return self.lookup(rel)
        except (Refused, OSError):
            return None
        finally:
            self._components = {}

    def _mark_written(self, rel: str) -> None:
        self._written.add(rel)
        while "/" in rel:
            rel = rel.rsplit("/", 1)[0]
            if rel in self._written_below:
                break
            self._written_below.add(rel)
