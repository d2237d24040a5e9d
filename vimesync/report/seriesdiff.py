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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vimesync import git
from vimesync.report.model import EnginePatches

ADDED, CHANGED, UNCHANGED = "added", "changed", "unchanged"
MAX_SERIES_BYTES = 1 << 20
_COMMENT = re.compile(r"(^|\s)#.*$")


def series_names(text: str) -> list[str]:
    """The patch names a quilt series lists, in order (options and comments dropped)."""
    names = []
    for raw in text.splitlines():
        line = _COMMENT.sub("", raw).strip()
        if line:
            names.append(line.split()[0])
    return names


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


def _series_at(downstream: Path, rev: str, rel: str) -> tuple[list[str], dict[str, str]] | None:
    """The series file ``rel`` (or ``rel/series``) at ``rev``: its names and their blob ids."""
    entries = {e.path: e for e in git.ls_tree(downstream, rev, [rel])}
    entry = entries.get(rel)
    if entry is None:
        entries = {e.path: e for e in git.ls_tree(downstream, rev, [f"{rel}/series"])}
        rel = f"{rel}/series"
        entry = entries.get(rel)
    if entry is None or entry.kind != "blob":
        return None
    with git.CatFile(downstream) as cat:
        text = cat.read(entry.oid, max_size=MAX_SERIES_BYTES).decode("utf-8", "replace")
    names = series_names(text.removeprefix("\ufeff"))
    folder = posixpath.dirname(rel)
    paths = [posixpath.join(folder, n) if folder else n for n in names]
    listed = {e.path: e.oid for e in git.ls_tree(downstream, rev, paths)} if paths else {}
    return names, {n: listed[p] for n, p in zip(names, paths, strict=True) if p in listed}


def mark_series(table: EnginePatches, downstream: Path, baseline: str, head: str, rel: str) -> EnginePatches:
    """``table``'s rows marked against the baseline's series (unmarked when the head's series is
    not in the downstream; every row "added" when the baseline had none)."""
    try:
        now = _series_at(downstream, head, rel)
        before = _series_at(downstream, baseline, rel)
    except git.GitError:
        return table
    if now is None:
        return table
    names, oids = now
    old_names, old_oids = before if before is not None else ([], {})
    marks, removed = series_changes(names, old_names, oids, old_oids)
    rows = tuple(replace(r, change=marks.get(r.name)) for r in table.rows)
    return replace(table, rows=rows, removed=removed)
