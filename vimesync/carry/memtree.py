"""The downstream tree held in memory: path -> :class:`Leaf` (mode, oid), and how many files
each folder holds (to tell a file from a folder in the way)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from vimesync import git

LINK, GITLINK = 0o120000, 0o160000


@dataclass(frozen=True)
class Leaf:
    """What the tree holds at a path: a file, a symbolic link or a submodule (mode, object id)."""

    mode: int
    oid: str


class Tree:
    """The downstream tree: path -> Leaf, and how many files each folder holds."""

    def __init__(self, entries: dict[str, Leaf]) -> None:
        self.entries = entries
        self.dirs: Counter[str] = Counter()
        for path in entries:
            self._count(path, 1)

    @classmethod
    def read(cls, repo: Path, rev: str) -> Tree:
        return cls({e.path: Leaf(e.mode, e.oid) for e in git.ls_tree(repo, rev) if e.kind != "tree"})

    def _count(self, path: str, n: int) -> None:
        i = path.find("/")
        while i != -1:
            self.dirs[path[:i]] += n
            if self.dirs[path[:i]] <= 0:
                del self.dirs[path[:i]]
            i = path.find("/", i + 1)

    def set(self, path: str, entry: Leaf | None) -> None:
        old = self.entries.pop(path, None)
        if old is not None:
            self._count(path, -1)
        if entry is not None:
            self.entries[path] = entry
            self._count(path, 1)

    def blocked(self, path: str) -> str | None:
        """Why a file cannot be added at ``path``: a file where a folder of it is, or a folder."""
        if self.dirs.get(path):
            return f"{path} is a folder downstream"
        i = path.find("/")
        while i != -1:
            if path[:i] in self.entries:
                return f"{path[:i]} is a file downstream"
            i = path.find("/", i + 1)
        return None
