"""Merging one upstream change into the downstream tree, file by file, without a checkout.

An upstream change is a first-parent commit against its first parent (``git diff-tree -M``).
Each changed file is mapped to its downstream path, both its upstream pre-image and post-image
are translated, and the downstream file is merged with them as ``git merge-file`` does: base =
translated pre-image, ours = the downstream file, theirs = translated post-image. Adds, deletes,
renames (both names mapped), mode changes, symbolic links, submodules and binary files are
decided on their object ids; only two different text edits of one file reach ``git merge-file``.

The tree is held in memory (path -> mode, oid); blobs the merge produces are kept until the
caller writes them (a dry run never does).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.carry.blobs import Blobs
from vimesync.carry.budget import Budget
from vimesync.carry.changes import Raw
from vimesync.carry.memtree import GITLINK, LINK, Leaf, Tree
from vimesync.errors import GitError
from vimesync.upstream import translate
from vimesync.upstream.translate import Transform, is_binary

MAX_HUNK_LINES = 5_000  # longer files: a conflict names no hunks (difflib is quadratic at worst)
MAX_TEXT_MERGE = 16 << 20  # bytes: larger files are not merged line by line (a conflict, like a binary)


@dataclass(frozen=True)
class MergeConflict:
    """One file the in-memory merge could not merge: its stages for git's conflict state, and
    what the carry reports of it (:class:`vimesync.carry.model.ConflictFile`)."""

    path: str  # downstream path
    # "content", "modify/delete", "delete/modify", "rename/delete", "add/add", "binary", "mode",
    # "directory/file"
    why: str
    stages: tuple[tuple[int, Leaf], ...]  # (1|2|3, entry)
    worktree: Leaf | None  # what the work tree shows (markers for a text conflict)
    hunks: tuple[str, ...] = ()  # the upstream hunks that conflict ("@@ -12,3 +12,5 @@")
    upstream_path: str = ""  # the upstream file (its old name) the change came from
    base_lines: tuple[tuple[int, int], ...] = ()  # 1-based line ranges of those hunks in its base
    hint: str = ""  # where the conflicting lines come from (carry/provenance.py)


@dataclass
class Change:
    """What merging one item (a PR's first-parent commits) did to the tree."""

    updates: dict[str, Leaf | None] = field(default_factory=dict)  # clean results (None: removed)
    conflicts: list[MergeConflict] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)  # downstream paths the upstream change touches
    left_out: list[str] = field(default_factory=list)  # upstream paths excluded
    hits: int = 0  # translation matches
    parent: str | None = None  # the upstream commit the conflicting step was merged against
    # downstream path -> (translated upstream pre-image, post-image) of the change (None: absent);
    # what a replay (carry/replay.py) compares a committed resolution with
    sides: dict[str, tuple[Leaf | None, Leaf | None]] = field(default_factory=dict)


def _hunks(base: bytes, theirs: bytes, ours: bytes) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """The upstream hunks (base -> theirs) that overlap or touch what the downstream changed, and
    the 1-based line ranges of the base they cover (a pure insertion: the lines around it)."""
    b, t, o = base.splitlines(), theirs.splitlines(), ours.splitlines()
    if max(len(b), len(t), len(o)) > MAX_HUNK_LINES:
        return ("(the file is too long to pair hunks)",), ()
    up = [op for op in difflib.SequenceMatcher(None, b, t, autojunk=False).get_opcodes() if op[0] != "equal"]
    down = [
        op for op in difflib.SequenceMatcher(None, b, o, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    hit = [op for op in up if any(d1 <= op[2] and op[1] <= d2 for _, d1, d2, _, _ in down)] or up
    heads = tuple(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@" for _, i1, i2, j1, j2 in hit)
    ranges = []
    for _, i1, i2, _, _ in hit:
        first, last = (i1 + 1, i2) if i2 > i1 else (max(1, i1), min(len(b), i1 + 1))
        if 1 <= first <= last <= len(b):
            ranges.append((first, last))
    return heads, tuple(ranges)


class Merger:
    """Merges upstream changes into a Tree (see the module docstring)."""

    def __init__(
        self,
        *,
        downstream: Path,
        upstream: Path,
        tree: Tree,
        transform: Transform,
        blobs: Blobs,
        scratch: Path,
        budget: Budget | None = None,
        describe: bool = True,
    ) -> None:
        self.budget = budget if budget is not None else Budget()
        # False: a conflict is its path and kind only (a replay asks no more), without the hunks
        # it pairs (difflib over the whole file) nor its stages written for git's index
        self.describe = describe
        self.downstream = downstream
        self.upstream = upstream
        self.tree = tree
        self.transform = transform
        self.blobs = blobs
        self.scratch = scratch
        self.same_format = blobs.algo == "sha1"
        # (upstream oid, mode, the translations that apply) -> (the oid carried, matches)
        self._translated: dict[tuple[str, int, tuple[int, ...]], tuple[str, int]] = {}
        self._upstream_path = ""  # the upstream (old) path of the record being merged

    # -- one side of the upstream change, translated --

    def _side(self, path: str, mode: int, oid: str, change: Change) -> Leaf:
        if mode == GITLINK:
            return Leaf(mode, oid)
        rules = tuple(i for i, t in enumerate(self.transform.translations) if t.applies_to(path))
        if self.same_format and (
            mode == LINK or not rules or self.blobs.size(oid, upstream=True) > translate.MAX_TRANSLATED
        ):  # carried as it is: never read (a 1 GB blob is not read to learn it is too large)
            self.blobs.upstream_oids.add(oid)
            return Leaf(mode, oid)
        key = (oid, mode, rules)
        known = self._translated.get(key)
        if known is None or not self._readable(known[0], oid):
            # A blob named by many paths is read and translated once (while its result is held).
            data = self.blobs.read_upstream(oid)
            out, hits = self.budget.translate(self.transform, path, data, mode)
            self._translated[key] = (self.blobs.hash(out) if hits or not self.same_format else oid, hits)
            if hits or not self.same_format:
                self.blobs.add(out)
        new_oid, hits = self._translated[key]
        change.hits += hits
        if new_oid == oid and self.same_format:
            self.blobs.upstream_oids.add(oid)
        return Leaf(mode, new_oid)

    def _readable(self, produced: str, oid: str) -> bool:
        return produced == oid or produced in self.blobs.cache or produced in self.blobs.kept

    def _content(self, entry: Leaf) -> bytes:
        return self.blobs.read(entry.oid)

    def _materialize(self, entry: Leaf | None) -> None:
        """A blob the result uses: written into the downstream with the change."""
        if entry is not None and entry.mode != GITLINK:
            self.blobs.want(entry.oid)

    # -- the merge --

    def apply(
        self,
        changes: Iterable[Raw],
        *,
        excluded: Callable[[str], bool],
        label: str,
        change: Change | None = None,
    ) -> Change:
        """Merge one upstream change (into ``change``, for an item of several commits);
        ``excluded(upstream path)`` leaves a path out."""
        change = change if change is not None else Change()
        to_downstream = self.transform.downstream_path
        for raw in changes:
            self.budget.tick()
            old, new = raw.old_path, raw.new_path
            if old is not None and excluded(old):
                change.left_out.append(old)
                old = None
            if new is not None and excluded(new):
                change.left_out.append(new)
                new = None
            if old is None and new is None:
                continue
            self._upstream_path = old or ""
            d_old = to_downstream(old) if old is not None else None
            d_new = to_downstream(new) if new is not None else None
            base = self._side(d_old, raw.old_mode, raw.old_oid, change) if d_old is not None else None
            theirs = self._side(d_new, raw.new_mode, raw.new_oid, change) if d_new is not None else None
            self._sides(change, d_old, d_new, base, theirs)
            if d_old is not None and d_new is not None and d_old != d_new:  # a rename
                change.paths.update((d_old, d_new))
                ours_old = self._current(change, d_old)
                if ours_old is None:
                    ours_new = self._current(change, d_new)
                    if ours_new is None:
                        # Deleted downstream, renamed upstream: git's rename/delete conflict
                        # (stages 1 and 3 at the new name, the upstream file in the work tree).
                        self._conflict(change, d_new, "rename/delete", base, None, theirs, label)
                    else:  # the downstream made the same rename: merge there
                        self._merge(change, d_new, base, ours_new, theirs, label)
                    continue
                ours_new = self._current(change, d_new)
                if ours_new is not None and ours_new != theirs:
                    self._conflict(change, d_new, "add/add", None, ours_new, theirs, label)
                    continue
                change.updates[d_old] = None
                before = len(change.conflicts)
                self._merge(change, d_new, base, ours_old, theirs, label)
                if d_new not in change.updates and len(change.conflicts) == before:
                    change.updates[d_new] = ours_old  # the merge kept the downstream's file
                continue
            path = d_new if d_new is not None else d_old
            assert path is not None
            change.paths.add(path)
            self._merge(change, path, base, self._current(change, path), theirs, label)
        return change

    @staticmethod
    def _sides(
        change: Change, d_old: str | None, d_new: str | None, base: Leaf | None, theirs: Leaf | None
    ) -> None:
        """The upstream's two sides per downstream path (a rename: the old name goes away); over
        several steps of one item, the first step's pre-image and the last one's post-image."""
        if d_old is not None and d_old != d_new:
            change.sides[d_old] = (change.sides.get(d_old, (base, None))[0], None)
        if d_new is not None:
            first = change.sides.get(d_new, (base, None))[0]  # a rename's: the old name's
            change.sides[d_new] = (first, theirs)

    def _current(self, change: Change, path: str) -> Leaf | None:
        if path in change.updates:
            return change.updates[path]
        return self.tree.entries.get(path)

    def _merge(
        self,
        change: Change,
        path: str,
        base: Leaf | None,
        ours: Leaf | None,
        theirs: Leaf | None,
        label: str,
    ) -> None:
        if ours == theirs:
            return
        if ours == base:
            if theirs is not None and (why := self.tree.blocked(path)) and path not in self.tree.entries:
                self._conflict(change, path, "directory/file", None, None, theirs, label, note=why)
                return
            self._materialize(theirs)
            change.updates[path] = theirs
            return
        if theirs == base:
            return  # only the downstream changed it
        if base is None or ours is None or theirs is None:
            why = "add/add" if base is None else ("modify/delete" if theirs is None else "delete/modify")
            if why == "add/add" and ours is not None and theirs is not None and self._texts(ours, theirs):
                self._text_merge(change, path, None, ours, theirs, label)
                return
            self._conflict(change, path, why, base, ours, theirs, label)
            return
        mode = self._mode(base.mode, ours.mode, theirs.mode)
        if mode is None or {base.mode, ours.mode, theirs.mode} & {LINK, GITLINK}:
            if ours.oid == theirs.oid and mode is not None:
                self._materialize(theirs)
                change.updates[path] = Leaf(mode, ours.oid)
                return
            self._conflict(change, path, "mode" if mode is None else "binary", base, ours, theirs, label)
            return
        if ours.oid == base.oid or ours.oid == theirs.oid:
            self._materialize(theirs)
            change.updates[path] = Leaf(mode, theirs.oid)
            return
        if theirs.oid == base.oid:
            if mode != ours.mode:
                change.updates[path] = Leaf(mode, ours.oid)
            return
        if not self._texts(base, ours, theirs):
            self._conflict(change, path, "binary", base, ours, theirs, label)
            return
        self._text_merge(change, path, base, ours, theirs, label, mode=mode)

    @staticmethod
    def _mode(base: int, ours: int, theirs: int) -> int | None:
        if ours == base:
            return theirs
        if theirs == base or ours == theirs:
            return ours
        return None

    def _texts(self, *entries: Leaf) -> bool:
        for e in entries:
            if e.mode in (LINK, GITLINK):
                return False
            if self.blobs.size(e.oid) > MAX_TEXT_MERGE:  # known without reading it
                return False
            if is_binary(self._content(e)):
                return False
        return True

    def _text_merge(
        self,
        change: Change,
        path: str,
        base: Leaf | None,
        ours: Leaf,
        theirs: Leaf,
        label: str,
        *,
        mode: int | None = None,
    ) -> None:
        data = {
            "base": self._content(base) if base else b"",
            "ours": self._content(ours),
            "theirs": self._content(theirs),
        }
        names = {}
        for key, content in data.items():
            fd, name = tempfile.mkstemp(prefix=f"{key}-", dir=self.scratch)
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            names[key] = name
        # diff3 markers: the base section shows what upstream started from, so a maintainer can
        # tell the downstream's edit from the upstream's (and a missing earlier upstream change).
        args = [
            "merge-file",
            "-p",
            "--diff3",
            "-L",
            "downstream",
            "-L",
            "upstream base",
            "-L",
            f"upstream {label}",
        ]
        code, out, err = git.run_status(
            self.downstream, [*args, names["ours"], names["base"], names["theirs"]]
        )
        for name in names.values():
            os.unlink(name)
        if code < 0 or code > 127:
            raise GitError(f"{path}: git merge-file failed: {err.decode('utf-8', 'replace')[:200]}")
        final_mode = mode if mode is not None else ours.mode
        merged = Leaf(final_mode, self.blobs.add(out))
        self._materialize(merged)
        if code == 0:
            change.updates[path] = merged
            return
        if not self.describe:
            change.conflicts.append(MergeConflict(path, "content", (), None))
            return
        hunks, ranges = _hunks(data["base"], data["theirs"], data["ours"])
        stages = tuple((n, e) for n, e in ((1, base), (2, ours), (3, theirs)) if e is not None)
        for _, e in stages:
            self._materialize(e)
        upstream = self._upstream_path if base is not None else ""
        change.conflicts.append(MergeConflict(path, "content", stages, merged, hunks, upstream, ranges))

    def _conflict(
        self,
        change: Change,
        path: str,
        why: str,
        base: Leaf | None,
        ours: Leaf | None,
        theirs: Leaf | None,
        label: str,
        note: str = "",
    ) -> None:
        stages = tuple((n, e) for n, e in ((1, base), (2, ours), (3, theirs)) if e is not None)
        for _, e in stages:
            self._materialize(e)
        shown = ours if ours is not None else theirs
        change.conflicts.append(MergeConflict(path, why if not note else f"{why}: {note}", stages, shown, ()))

    def commit_change(self, change: Change) -> None:
        """Apply a clean change to the tree."""
        for path, entry in change.updates.items():
            self.tree.set(path, entry)
