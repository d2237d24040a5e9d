"""Replay a sync's carried items to find the conflicts a maintainer resolved (and the edits made
during ``--continue``), without trusting what the commit messages say about them.

For each first-parent commit of ``baseline..head`` that names carried items (its
``Upstream-Commit:`` or ``Upstream-PR:`` trailers: they only say where to look), the carry's own
merge (:class:`vimesync.carry.engine.Engine`, in memory) is run again: the items' upstream
changes onto the commit's parent. A path where that merge conflicts, or where the commit holds
another file than the clean merge gives, is resolved (:mod:`vimesync.carry.resolutions`). A
trailer that names an item the commit does not carry makes its paths resolved: a forged trailer
shows, it never hides. Nothing is written: the merged blobs are dropped after each commit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.carry.budget import Budget
from vimesync.carry.changes import tree_changes
from vimesync.carry.engine import Engine
from vimesync.carry.memtree import GITLINK, LINK, Leaf, Tree
from vimesync.carry.model import Item
from vimesync.carry.resolutions import (
    CONFLICT,
    EDITED,
    EDITED_OUTSIDE,
    MAX_COMPARED,
    MAX_FILES,
    Resolution,
    Resolutions,
    ResolvedFile,
    dropped_lines,
)
from vimesync.errors import BadInput, GitError, GitTimeout
from vimesync.safefs import scratch_dir
from vimesync.upstream.translate import Transform, is_binary

MAX_COMMITS = 5_000  # first-parent commits of baseline..head read (the newest)
MAX_ITEMS = 500  # carried items replayed; the others are named in a note
MAX_TRAILERS = 1 << 20  # bytes of the log of trailers read
_PR = re.compile(r"^(?:[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100})?#(\d{1,9})$")
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True)
class ReplayInputs:
    downstream: Path
    upstream: Path
    transform: Transform  # the carry's path map and translations
    items: Sequence[Item]  # the carried items, in carry order
    baseline: str  # full shas
    head: str
    budget: Budget


@dataclass(frozen=True)
class _Commit:
    sha: str
    parent: str | None
    names: tuple[str, ...]  # Upstream-Commit values, then "#N" of Upstream-PR values
    carries: bool = False  # it names an upstream commit: a carried item's own commit


def _commits(downstream: Path, baseline: str, head: str) -> tuple[list[_Commit], bool]:
    """The first-parent commits of ``baseline..head``, oldest first, and whether there were more."""
    fmt = (
        "%H %P%x00%(trailers:key=Upstream-Commit,valueonly,separator=%x01)"
        "%x00%(trailers:key=Upstream-PR,valueonly,separator=%x01)%x00"
    )
    args = [
        "log",
        "--first-parent",
        f"--max-count={MAX_COMMITS + 1}",
        f"--format={fmt}",
        f"{baseline}..{head}",
    ]
    out = git.run(downstream, args)
    fields = out[:MAX_TRAILERS].decode("utf-8", "replace").split("\0")
    found: list[_Commit] = []
    for i in range(0, len(fields) - 2, 3):
        shas = fields[i].split()
        if not shas or not _OID.match(shas[0]):
            continue
        names = [v.strip() for v in fields[i + 1].split("\x01") if _OID.match(v.strip())]
        carries = bool(names)
        names += [f"#{m[1]}" for v in fields[i + 2].split("\x01") if (m := _PR.match(v.strip()))]
        parent = shas[1] if len(shas) > 1 else None
        found.append(_Commit(shas[0], parent, tuple(dict.fromkeys(names)), carries))
    more = len(found) > MAX_COMMITS
    return list(reversed(found[:MAX_COMMITS])), more


def _committed(downstream: Path, commits: Sequence[_Commit]) -> dict[str, dict[str, Leaf | None]]:
    """What each commit changed against its parent: sha -> path -> its entry (None: removed).
    One ``git diff-tree --stdin`` for them all, not one process per commit of the sync."""
    changes = tree_changes(downstream, [(c.sha, c.parent) for c in commits], renames=False)
    found: dict[str, dict[str, Leaf | None]] = {}
    for sha, raws in changes.items():
        out = found[sha] = {}
        for raw in raws:
            if raw.old_path is not None and raw.old_path != raw.new_path:
                out[raw.old_path] = None
            if raw.new_path is not None:
                out[raw.new_path] = Leaf(raw.new_mode, raw.new_oid)
    return found


@dataclass
class _Merged:
    """What merging one commit's items did: the parent's entries of the paths it moved, the
    conflicts, the paths each item touched, the upstream sides per path."""

    parent: dict[str, Leaf | None] = field(default_factory=dict)
    conflicted: dict[str, tuple[Item, str]] = field(default_factory=dict)
    touched: dict[str, Item] = field(default_factory=dict)
    sides: dict[str, tuple[Leaf | None, Leaf | None]] = field(default_factory=dict)
    # every item that touched a path, with its own upstream sides (a commit of the pin bump
    # names several PRs: one that touched a path before the last one did is named too)
    each: dict[str, dict[str, tuple[Item, tuple[Leaf | None, Leaf | None] | None]]] = field(
        default_factory=dict
    )


class _Replay:
    """One replay: the tree at the commit before the one replayed, and what was found."""

    def __init__(self, inputs: ReplayInputs, engine: Engine) -> None:
        self.i = inputs
        self.engine = engine
        self.at = inputs.baseline
        self.found: list[Resolution] = []
        self.replayed = 0

    @property
    def tree(self) -> Tree:
        return self.engine.merger.tree

    def advance(self, commit: _Commit, diff: Mapping[str, Leaf | None]) -> None:
        """The tree at ``commit`` (read again when its parent is not the tree held)."""
        if commit.parent != self.at:
            self.engine.merger.tree = Tree.read(self.i.downstream, commit.sha)
        else:
            for path, entry in diff.items():
                self.tree.set(path, entry)
        self.at = commit.sha

    def commit(self, commit: _Commit, items: Sequence[Item], diff: Mapping[str, Leaf | None]) -> None:
        """Merge ``items`` onto the commit's parent and compare with what it holds (``diff``:
        what the commit changed against its parent)."""
        if commit.parent != self.at:
            self.engine.merger.tree = Tree.read(self.i.downstream, commit.parent or commit.sha)
        merged = self._merge(items, diff)
        moved = {*merged.parent, *diff}
        # What the commit holds: its own changes, else the parent's entries.
        committed = {p: diff[p] if p in diff else merged.parent.get(p, self._now(p)) for p in moved}
        # A carry's commit (it names an upstream commit) holds nothing but the merge: any other
        # path it changes was edited during --continue. The pin bump names the PRs that made no
        # commit (Upstream-PR): only their own paths are looked at there.
        looked = {*merged.touched, *diff} if commit.carries else set(merged.touched)
        resolved = set(merged.conflicted)
        resolved.update(p for p in looked if self._now(p) != committed.get(p, self._now(p)))
        by_item: dict[str, list[ResolvedFile]] = {}
        for n, path in enumerate(sorted(resolved)):
            item, why = merged.conflicted.get(path, (merged.touched.get(path, items[-1]), ""))
            kind = f"{CONFLICT}: {why}" if why else EDITED if path in merged.touched else EDITED_OUTSIDE
            entry = committed.get(path, self._now(path))
            if n < MAX_FILES:
                detail = self._file(path, kind, merged.sides.get(path), entry)
            else:
                detail = ResolvedFile(path, kind, note=f"not compared (over {MAX_FILES} files)")
            by_item.setdefault(item.upstream_commit, []).append(detail)
            for other, side in merged.each.get(path, {}).values():
                if other.upstream_commit != item.upstream_commit and n < MAX_FILES:
                    earlier = self._file(path, kind, side, entry)
                    by_item.setdefault(other.upstream_commit, []).append(earlier)
        for item in items:
            if files := by_item.get(item.upstream_commit):
                self.found.append(
                    Resolution(item.pr, item.title, item.upstream_commit, commit.sha, tuple(files))
                )
        for path in moved:
            self.tree.set(path, committed[path])
        self.at = commit.sha
        self.engine.blobs.forget()

    def _merge(self, items: Sequence[Item], diff: Mapping[str, Leaf | None]) -> _Merged:
        """The items merged one after the other into the tree (a conflicting path takes what
        the commit holds, as the maintainer's resolution did)."""
        out = _Merged()
        for item in items:
            change = self.engine.merge(item)
            self.replayed += 1
            for c in change.conflicts:
                out.conflicted[c.path] = (item, c.why)
            for path in (*change.paths, *change.updates, *change.sides):
                out.touched[path] = item
                out.each.setdefault(path, {})[item.upstream_commit] = (item, change.sides.get(path))
            out.sides.update(change.sides)
            moved = dict(change.updates)
            moved.update({c.path: diff.get(c.path, self._now(c.path)) for c in change.conflicts})
            for path, entry in moved.items():
                out.parent.setdefault(path, self._now(path))
                self.tree.set(path, entry)
        return out

    def _now(self, path: str) -> Leaf | None:
        return self.tree.entries.get(path)

    def _file(
        self, path: str, why: str, side: tuple[Leaf | None, Leaf | None] | None, entry: Leaf | None
    ) -> ResolvedFile:
        """A resolved path and the upstream lines the committed ``entry`` lacks."""
        if side is None:
            return ResolvedFile(path, why)
        base, theirs = side
        if theirs is None:
            return ResolvedFile(path, why, note="kept: the upstream change deletes it" if entry else "")
        leaves = [e for e in (base, theirs, entry) if e is not None]
        if any(e.mode in (LINK, GITLINK) for e in leaves):
            return ResolvedFile(path, why, note="not a text file")
        blobs = self.engine.blobs
        if any(blobs.size(e.oid) > MAX_COMPARED for e in leaves):
            return ResolvedFile(path, why, note="too large to compare lines")
        data = [blobs.read(e.oid) if e is not None else b"" for e in (base, theirs, entry)]
        if any(is_binary(d) for d in data):
            return ResolvedFile(path, why, note="binary: not compared line by line")
        dropped, count, added = dropped_lines(*data)
        note = "" if entry is not None else "deleted by the resolution"
        return ResolvedFile(path, why, dropped, count, added, note)


def replay(inputs: ReplayInputs) -> Resolutions:
    """The carried items of ``baseline..head`` with resolved paths (see the module docstring)."""
    by_name: dict[str, Item] = {}
    for item in inputs.items:
        by_name.setdefault(item.upstream_commit, item)
        if item.pr is not None:
            by_name.setdefault(f"#{item.pr}", item)
    commits, more = _commits(inputs.downstream, inputs.baseline, inputs.head)
    notes = [f"only the newest {MAX_COMMITS:,} commits of the sync were replayed"] if more else []
    seen: set[str] = set()
    with scratch_dir("vimesync-replay-") as tmp:
        engine = Engine(
            inputs.downstream,
            inputs.upstream,
            inputs.transform,
            inputs.baseline,
            Path(tmp),
            inputs.budget,
            describe=False,  # a conflict's path and kind are all a replay reads of it
        )
        run = _Replay(inputs, engine)
        try:
            named = {n for c in commits for n in c.names}
            wanted = [i for i in inputs.items if i.upstream_commit in named or f"#{i.pr}" in named]
            engine.prefetch(wanted[:MAX_ITEMS])  # their upstream changes: one git diff-tree --stdin
            diffs = _committed(inputs.downstream, commits)  # the commits' own: one more
            for c in commits:
                items = list({id(i): i for i in (by_name[n] for n in c.names if n in by_name)}.values())
                items = [i for i in items if i.upstream_commit not in seen]
                if not items or run.replayed + len(items) > MAX_ITEMS:
                    run.advance(c, diffs.get(c.sha, {}))
                    continue
                seen.update(i.upstream_commit for i in items)
                run.commit(c, sorted(items, key=inputs.items.index), diffs.get(c.sha, {}))
        except (BadInput, GitError, GitTimeout) as e:
            notes.append(f"the replay stopped at {run.at[:12]}: {type(e).__name__}")
        finally:
            engine.close()
    # A direct commit no commit names was not carried; a PR was (the caller says which are).
    left = [i.label for i in inputs.items if i.upstream_commit not in seen and i.pr is not None]
    if left:
        shown = ", ".join(left[:10]) + (" …" if len(left) > 10 else "")
        notes.append(f"not replayed (no commit of the sync names it, or over the bounds): {shown}")
    return Resolutions(tuple(run.found), run.replayed, tuple(notes))
