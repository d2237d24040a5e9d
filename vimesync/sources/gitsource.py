"""A git work tree or bare mirror at a commit, read only through objects (``ls-tree`` +
``cat-file --batch``), never the work tree, index or refs; blob ids double as free content hashes
for the parse cache."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput
from vimesync.git import MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK
from vimesync.sources.model import Entry, Source, SourceInfo


class GitSource(Source):
    def __init__(self, path: Path, rev: str | None) -> None:
        # git runs in the user's path (work tree root or bare repo), so its messages name that path.
        sha = git.resolve(path, rev or "HEAD")
        files: dict[str, Entry] = {}
        submodules = 0
        for e in git.ls_tree(path, sha):
            if e.mode == MODE_GITLINK:
                submodules += 1
            elif e.kind == "blob":
                if e.path in files:  # a tree with a duplicate entry name (git never writes one)
                    raise BadInput(f"{path}: {e.path!r} appears twice in the tree of {sha}")
                mode = e.mode if e.mode in (MODE_EXEC, MODE_LINK) else MODE_FILE
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
