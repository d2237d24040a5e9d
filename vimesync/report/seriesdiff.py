"""The Engine patches table against the pre-sync baseline: which series entries the sync added,
changed or removed, and which it left unchanged.

Both series are read from commits of the downstream (the baseline and the head), never from a
work tree: the names a series lists (the first word of each line, ``#`` comments dropped) and the
blob id of each patch file beside it. :func:`series_changes` is pure; :func:`mark_series` reads
the two commits through ``vimesync.git`` and marks an :class:`EnginePatches` table.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vimesync import git
from vimesync.report.model import EnginePatches

ADDED, CHANGED, UNCHANGED = "added", "changed", "unchanged"
HEADER_CHANGED = "header changed"  # the patch file differs in its DEP-3 header only
MAX_SERIES_BYTES = 1 << 20
MAX_COMPARED_BYTES = 16 << 20  # a patch read to tell a header-only change (larger: "changed")
_COMMENT = re.compile(r"(^|\s)#.*$")
_STRIP = re.compile(r"-p(\d{1,6})")
# Where a patch's diff starts (what parse_dep3 stops at, the "---" separator aside).
_DIFF_START = re.compile(rb"^(?:diff |--- |Index: )", re.MULTILINE)


def series_names(text: str) -> list[str]:
    """The patch names a quilt series lists, in order (options and comments dropped)."""
    return list(series_strips(text))


def series_strips(text: str) -> dict[str, int | None]:
    """Each patch name a quilt series lists, in order, with its ``-pN`` (None: the pin's strip)."""
    out: dict[str, int | None] = {}
    for raw in text.splitlines():
        line = _COMMENT.sub("", raw).strip()
        if line:
            name, *options = line.split()
            strips = [int(m[1]) for o in options if (m := _STRIP.fullmatch(o))]
            out.setdefault(name, strips[-1] if strips else None)
    return out


def diff_part(patch: bytes) -> bytes:
    """A patch without its free-text header: from its first diff line on (all of it when none)."""
    m = _DIFF_START.search(patch)
    return patch[m.start() :] if m else patch


def series_changes(
    head: Sequence[str],
    baseline: Sequence[str],
    head_oids: Mapping[str, str],
    baseline_oids: Mapping[str, str],
) -> tuple[dict[str, str], tuple[str, ...]]:
    """(each head entry -> added/changed/unchanged, the baseline's entries the head dropped)."""
    marks = {}
    for name in head:
        if name not in baseline:
            marks[name] = ADDED
        else:
            same = head_oids.get(name) is not None and head_oids.get(name) == baseline_oids.get(name)
            marks[name] = UNCHANGED if same else CHANGED
    return marks, tuple(n for n in baseline if n not in head)


def _strip_word(strip: int | None, default: int) -> str:
    return f"-p{default if strip is None else strip}"


def refine(
    marks: Mapping[str, str],
    strips: tuple[Mapping[str, int | None], Mapping[str, int | None]],
    same_diff: Callable[[str], bool],
    default_strip: int = 1,
) -> dict[str, str]:
    """``marks`` told apart further: a changed patch whose diff is the same reads "header
    changed" (``same_diff(name)``), and an entry whose strip level moved says so, "unchanged"
    or not: ``unchanged; strip -p1 → -p0``. ``strips``: (head, baseline) ``-pN`` per name."""
    head, before = strips
    out = {}
    for name, mark in marks.items():
        if mark == CHANGED and same_diff(name):
            mark = HEADER_CHANGED
        if mark != ADDED:
            now, was = (
                _strip_word(head.get(name), default_strip),
                _strip_word(before.get(name), default_strip),
            )
            if now != was:
                mark += f"; strip {was} → {now}"
        out[name] = mark
    return out


_Series = tuple[dict[str, int | None], dict[str, str]]


def _series_at(downstream: Path, rev: str, rel: str, cat: git.CatFile) -> _Series | None:
    """The series file ``rel`` (or ``rel/series``) at ``rev``: its names with their ``-pN``, and
    their blob ids."""
    entries = {e.path: e for e in git.ls_tree(downstream, rev, [rel])}
    entry = entries.get(rel)
    if entry is None:
        entries = {e.path: e for e in git.ls_tree(downstream, rev, [f"{rel}/series"])}
        rel = f"{rel}/series"
        entry = entries.get(rel)
    if entry is None or entry.kind != "blob":
        return None
    text = cat.read(entry.oid, max_size=MAX_SERIES_BYTES).decode("utf-8", "replace")
    strips = series_strips(text.removeprefix("\ufeff"))
    folder = posixpath.dirname(rel)
    paths = [posixpath.join(folder, n) if folder else n for n in strips]
    listed = {e.path: e.oid for e in git.ls_tree(downstream, rev, paths)} if paths else {}
    return strips, {n: listed[p] for n, p in zip(strips, paths, strict=True) if p in listed}


def _same_diff(cat: git.CatFile, oids: tuple[Mapping[str, str], Mapping[str, str]]) -> Callable[[str], bool]:
    """Whether a patch's two versions (head, baseline blob ids) differ in their header only."""

    def same(name: str) -> bool:
        a, b = oids[0].get(name), oids[1].get(name)
        if a is None or b is None:
            return False
        try:
            now = cat.read(a, max_size=MAX_COMPARED_BYTES)
            was = cat.read(b, max_size=MAX_COMPARED_BYTES)
        except git.GitError:  # too large, or not a blob: a change like any other
            return False
        return diff_part(now) == diff_part(was)

    return same


def mark_series(
    table: EnginePatches, downstream: Path, baseline: str, head: str, rel: str, *, strip: int = 1
) -> EnginePatches:
    """``table``'s rows marked against the baseline's series (unmarked when the head's series is
    not in the downstream; every row "added" when the baseline had none). ``strip``: the pin's,
    for entries without ``-pN``."""
    with git.CatFile(downstream) as cat:  # one reader of both commits' series and patches
        try:
            now = _series_at(downstream, head, rel, cat)
            before = _series_at(downstream, baseline, rel, cat)
        except git.GitError:
            return table
        if now is None:
            return table
        strips, oids = now
        old_strips, old_oids = before if before is not None else ({}, {})
        marks, removed = series_changes(list(strips), list(old_strips), oids, old_oids)
        marks = refine(marks, (strips, old_strips), _same_diff(cat, (oids, old_oids)), strip)
    rows = tuple(replace(r, change=marks.get(r.name)) for r in table.rows)
    return replace(table, rows=rows, removed=removed)
