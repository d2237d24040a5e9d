"""The merge machinery of one carry run: the downstream tree in memory, the blobs, the upstream
changes each item needs (prefetched through one ``git diff-tree --stdin``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vimesync.carry import gitops
from vimesync.carry.blobs import Blobs
from vimesync.carry.budget import Budget
from vimesync.carry.changes import Raw, upstream_change, upstream_changes
from vimesync.carry.memtree import Leaf, Tree
from vimesync.carry.merge import Change, Merger
from vimesync.carry.model import Item
from vimesync.carry.plan import Meta, read_meta
from vimesync.upstream.translate import Transform


def _runs(item: Item, metas: dict[str, Meta]) -> list[tuple[str | None, str]]:
    """(parent, last commit) of each run of consecutive first-parent steps."""
    runs: list[tuple[str | None, str]] = []
    for sha in item.steps:
        parents = metas[sha].parents
        first = parents[0] if parents else None
        if runs and runs[-1][1] == first:
            runs[-1] = (runs[-1][0], sha)
        else:
            runs.append((first, sha))
    return runs


class Engine:
    """The merge machinery of one run: the tree in memory, blobs, the upstream changes."""

    def __init__(
        self,
        downstream: Path,
        upstream: Path,
        transform: Transform,
        start_tree: str,
        scratch: Path,
        budget: Budget,
        *,
        describe: bool = True,  # False: conflicts without their hunks (a replay: Merger)
    ) -> None:
        self.downstream = downstream
        self.upstream = upstream
        self.blobs = Blobs(downstream, upstream, gitops.object_format(downstream))
        self.start_tree = start_tree
        self.merger = Merger(
            downstream=downstream,
            upstream=upstream,
            tree=Tree.read(downstream, start_tree),
            transform=transform,
            blobs=self.blobs,
            scratch=scratch,
            budget=budget,
            describe=describe,
        )
        self.start_entries = dict(self.merger.tree.entries)
        self.scratch = scratch
        self.metas: dict[str, Meta] = {}
        self.changes: dict[str, list[Raw]] = {}

    def meta(self, sha: str) -> Meta:
        if sha not in self.metas:
            self.metas[sha] = read_meta(self.blobs.up, sha)
        return self.metas[sha]

    def prefetch(self, items: Sequence[Item]) -> None:
        """Every upstream change the items need, through one ``git diff-tree --stdin``."""
        pairs: list[tuple[str, str | None]] = []
        for item in items:
            for sha in item.steps:
                self.meta(sha)
            pairs += [(last, parent) for parent, last in _runs(item, self.metas) if last not in self.changes]
        self.changes.update(upstream_changes(self.upstream, pairs))

    def merge(self, item: Item) -> Change:
        for sha in item.steps:
            self.meta(sha)
        left = {p for p, _ in item.excluded}
        change = Change()
        for parent, last in _runs(item, self.metas):
            raws = (
                self.changes[last] if last in self.changes else upstream_change(self.upstream, last, parent)
            )
            self.merger.apply(raws, excluded=left.__contains__, label=item.label, change=change)
            if change.conflicts:
                change.parent = parent
                break
        return change

    def tree_now(self) -> str:
        """The in-memory tree as a tree object (its blobs must be in the downstream already)."""
        entries = self.merger.tree.entries
        diff: dict[str, Leaf | None] = {p: e for p, e in entries.items() if self.start_entries.get(p) != e}
        diff.update({p: None for p in self.start_entries if p not in entries})
        if not diff:
            return self.start_tree
        index = gitops.Index(self.downstream, self.scratch, self.start_tree)
        index.update(diff)
        return index.write_tree()

    def close(self) -> None:
        self.blobs.close()
