"""``pin bump --refresh``: one patch of the stack re-made for the new pin (quilt's ``refresh``, or
``gbp pq rebase`` with git's 3-way merge), decided while the bump walks the stack.

For each patch, against a tree of the new source carrying the patches refreshed so far:

- it applies there with no offset: kept byte for byte;
- it applies with hunks moved: the moved files' hunks are made again from the new tree;
- it is already there (every hunk applies in reverse): dropped from the series, with the reason;
- else each file is merged in 3 ways (base: the file at the old pin before the patch; ours: the
  new pin's; theirs: the old pin's file with the patch applied): when every file merges cleanly
  the patch is made again from the merge, otherwise it is left unchanged and the merged files,
  conflict markers and all, are handed back for ``--conflicts DIR``.

A re-made patch keeps its header (the text before the first file section) and every section that
did not change byte for byte; it must apply to the new tree with no offset, or it is not used.
Nothing here writes outside the scratch folder: the caller writes the plan (see ``bump``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from vimesync.check.rediff import (
    DIFF_CONTEXT,
    NewSection,
    Scratch,
    diff_hunks,
    merge3,
    plain_modification,
    splice,
)
from vimesync.errors import PatchError
from vimesync.git import blob_oid
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import FilePatch, PatchFile, PatchResult
from vimesync.patches.tree import MODE_DIR, ScratchTree

Action = Literal["keep", "rewrite", "drop", "conflict"]
State = Mapping[str, "tuple[bytes, int] | None"]  # path -> (bytes, mode) in a tree, None: missing
FindsMoved = Callable[[str, bytes], "str | None"]  # (path gone at the new pin, its old bytes) -> new path


@dataclass(frozen=True)
class Refreshed:
    """What ``--refresh`` does to one patch."""

    action: Action
    why: str  # "hunks moved", "3-way merge", "already applied at ...", "conflicts in ..."
    data: bytes | None = None  # the new patch file, for "rewrite"
    conflicts: tuple[tuple[str, bytes], ...] = ()  # (path, merged file with conflict markers)
    merged: tuple[tuple[str, bytes], ...] = ()  # a conflicting patch's files that merged cleanly
    moved: tuple[tuple[str, str | None], ...] = ()  # a file gone at the new pin: where it went


def state(tree: ScratchTree, paths: list[str]) -> dict[str, tuple[bytes, int] | None]:
    """The current content of ``paths`` in ``tree``."""
    return {p: tree.current(p) for p in dict.fromkeys(paths)}


def old_paths(patch: PatchFile) -> list[str]:
    return [fp.old_path for fp in patch.files if fp.old_path is not None]


def new_paths(patch: PatchFile) -> list[str]:
    return [fp.new_path for fp in patch.files if fp.new_path is not None]


@dataclass(frozen=True)
class OldSide:
    """The patch at the old pin: its result, and its files before and after it."""

    result: PatchResult
    before: State
    after: State


@dataclass(frozen=True)
class RefreshContext:
    """What every patch of one stack is refreshed with: ``tree``, the new source carrying the
    patches refreshed so far; the git ``scratch`` that diffs and merges; the two pins' labels;
    where a file gone at the new pin went (``where_moved``)."""

    tree: ScratchTree
    scratch: Scratch
    new_label: str
    old_label: str
    where_moved: FindsMoved | None = None


def refresh_patch(
    ctx: RefreshContext, raw: bytes, patch: PatchFile, old: OldSide, *, strip: int
) -> Refreshed:
    """Decide (and apply to ``ctx.tree``) what becomes of ``patch``; ``raw`` is its file,
    ``patch`` parsed from exactly those bytes."""
    tree = ctx.tree
    before = state(tree, old_paths(patch))
    result = tree.apply(patch)
    if result.ok and not result.offsets:
        return Refreshed("keep", "applies as it is")
    if result.ok:
        moved = {o.file for o in result.offsets}
        sections: dict[int, NewSection | None] = {}
        for k, fp in enumerate(patch.files):
            if fp.path in moved and plain_modification(fp):
                ours, now = before.get(fp.path), tree.current(fp.path)
                if ours is None or now is None:
                    continue
                sections[k] = section(ctx.scratch, ours[0], now[0], context_of(fp))
        data = splice(raw, patch, sections)
        return Refreshed("rewrite", "hunks moved", data=data)
    if result.reverse_applies:
        return Refreshed("drop", f"already applied in {ctx.new_label}")
    return _merge(ctx, raw, patch, result, old, before, strip)


def section(scratch: Scratch, old: bytes, new: bytes, context: int) -> NewSection | None:
    if old == new:
        return None
    return NewSection(diff_hunks(scratch, old, new, context=context), blob_oid(old), blob_oid(new))


def _leading(tags: str) -> int:
    return len(tags) - len(tags.lstrip(" "))


def context_of(fp: FilePatch) -> int:
    """The context the section was made with (its widest hunk side), so a refresh keeps it."""
    widest = max((max(_leading(h.lines.tags), h.trailing_context) for h in fp.hunks), default=0)
    return widest or DIFF_CONTEXT


def _merge(
    ctx: RefreshContext,
    raw: bytes,
    patch: PatchFile,
    result: PatchResult,
    old: OldSide,
    before: State,
    strip: int,
) -> Refreshed:
    scratch, where_moved = ctx.scratch, ctx.where_moved
    new_label, old_label = ctx.new_label, ctx.old_label
    if not old.result.ok:
        return Refreshed("conflict", f"does not apply at {old_label} either: nothing to merge from")
    failed = {f.file for f in result.failures}
    paths = [fp.path for fp in patch.files]
    sections: dict[int, NewSection | None] = {}
    conflicts: list[tuple[str, bytes]] = []
    unmergeable: list[str] = []
    clean: list[tuple[str, bytes]] = []
    moved: list[tuple[str, str | None]] = []
    for k, fp in enumerate(patch.files):
        if not plain_modification(fp) or paths.count(fp.path) > 1:
            if fp.path in failed:
                unmergeable.append(fp.path)
            continue
        base, theirs, ours = old.before.get(fp.path), old.after.get(fp.path), before.get(fp.path)
        if ours is None and base is not None:  # gone at the new pin: say where it went
            moved.append((fp.path, where_moved(fp.path, base[0]) if where_moved else None))
            continue
        if base is None or theirs is None or ours is None or MODE_DIR in (base[1], theirs[1], ours[1]):
            unmergeable.append(fp.path)
            continue
        labels = (f"{fp.path} ({new_label})", f"{fp.path} ({old_label})", f"{fp.path} ({patch.name})")
        merged = merge3(scratch, base=base[0], ours=ours[0], theirs=theirs[0], labels=labels)
        if merged.conflicts:
            conflicts.append((fp.path, merged.data))
            continue
        clean.append((fp.path, merged.data))
        sections[k] = section(scratch, ours[0], merged.data, context_of(fp))
    if conflicts or unmergeable or moved:
        whys = []
        if conflicts:
            whys.append(f"conflicts in {_shown([p for p, _ in conflicts])}")
        if unmergeable:
            whys.append(f"cannot merge {_shown(unmergeable)} (not a plain text change)")
        for path, to in moved[:3]:
            whys.append(f"{path} is gone at {new_label}" + (f": moved to {to}" if to else ""))
        return Refreshed(
            "conflict", "; ".join(whys), conflicts=tuple(conflicts), merged=tuple(clean), moved=tuple(moved)
        )
    if all(s is None for s in sections.values()) and len(sections) == len(patch.files):
        return Refreshed("drop", f"already applied in {new_label} (the 3-way merge changes nothing)")
    data = splice(raw, patch, sections)
    try:
        remade = parse_patch(data, name=patch.name, strip=strip)
    except PatchError:
        return Refreshed("conflict", "the merged patch does not parse")
    check = ctx.tree.apply(remade)
    if not check.ok or check.offsets:
        return Refreshed("conflict", "the merged patch does not apply cleanly")
    return Refreshed("rewrite", "3-way merge", data=data)


def _shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
