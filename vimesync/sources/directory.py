"""A plain directory (also the unpacked form of a tarball): read in place; ``.git`` entries are
ignored, symlinks are listed, never followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vimesync import nofollow
from vimesync.errors import BadInput
from vimesync.git import MODE_EXEC, MODE_FILE, MODE_LINK
from vimesync.pycheck.model import StatKey
from vimesync.sources.model import Entry, Source, SourceInfo


def _scan(root: Path, max_files: int, stats: dict[str, StatKey]) -> dict[str, Entry]:
    """Every file below ``root`` (and into ``stats``, each regular file's lstat key)."""
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
                    files[rel] = Entry(MODE_LINK, len(os.fsencode(os.readlink(d.path))))
                elif stat.S_ISREG(st.st_mode):
                    files[rel] = Entry(MODE_EXEC if st.st_mode & 0o100 else MODE_FILE, st.st_size)
                    stats[rel] = StatKey(st.st_size, st.st_mtime_ns, st.st_ino)
                # sockets, fifos, devices: not part of a source tree
                if len(files) > max_files:
                    raise BadInput(f"{root}: holds over {max_files:,} files; not an engine source tree")
    return files


class DirectorySource(Source):
    def __init__(
        self, root: Path, *, kind: str = "directory", shown: Path | None = None, max_files: int = 200_000
    ) -> None:
        info = SourceInfo(kind=kind, path=str(shown or root), rev=None)
        self._stats: dict[str, StatKey] = {}
        super().__init__(info, _scan(root, max_files, self._stats))
        self._root = root
        self._abs_root = os.path.join(os.path.abspath(root), "")
        # A folder of our own (an unpacked archive) is new each run: nothing to key by stat.
        self._keep_stats = shown is None

    def _stat(self, path: str) -> StatKey | None:
        return self._stats.get(path) if self._keep_stats else None

    def _disk_path(self, path: str) -> str | Path | None:
        # Read in place by the parser (O_NOFOLLOW on the file); the scan listed no path through
        # a symlink, so no leading component is one unless the folder changes under us.
        return self._abs_root + path  # a str: thousands of Path objects cost more than the stat

    def read(self, path: str) -> bytes:
        """Walked from the root without following any symlink (the scan never listed a path
        through one; this holds even if the folder changed since)."""
        e = self.entry(path)
        got = nofollow.read_entry(self._root, path)
        if got is None or stat.S_IFMT(got[0].st_mode) != (stat.S_IFLNK if e.is_symlink else stat.S_IFREG):
            raise BadInput(f"{self.info.path}: {path!r} changed while being read")
        return got[1]


# ---------------------------------------------------------------------------------------------
