"""``pin scan``: the stack at several releases in one walk, a patch x release matrix.

The machinery of ``pin bump`` (check/bump.py) for any number of pins: every release gets one
scratch tree holding only the files the stack touches, every patch is applied once to each tree
in series order (a patch that fails leaves its tree as it was, as ``git apply --check`` would),
and each patched tree is parsed (the parse cache, keyed by content, is shared by them all).
Each release is independent: :func:`merge_scans` puts per-release documents back into one matrix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from vimesync.check.bump import apply_patch, label, parse_scratch, verdict
from vimesync.check.model import CheckOptions, ProgressFn
from vimesync.check.run import load_stack, mark_upstreamed, source_provider
from vimesync.errors import BadInput
from vimesync.patches.model import PatchResult
from vimesync.patches.series import load_series
from vimesync.patches.tree import ScratchTree
from vimesync.safefs import Range, Size, Text, decode, open_keys, scratch_dir
from vimesync.sources import SourceInfo, open_source
from vimesync.text import of_total, plural

# A release scanned: what the flag said, the source it opened, and its rev (None: not git).
MAX_RELEASES = 64
# The statuses a cell holds, as ``patches check`` spells them; ``missing``: the release's
# document does not name the patch (a merged matrix whose series differed).
Status = Literal["applied", "offsets", "already-applied", "partly-applied", "failed", "skipped", "missing"]
STATUSES: tuple[str, ...] = get_args(Status)
BAD = ("partly-applied", "failed")


@dataclass(frozen=True)
class Release:
    """One column: its label, what ``--to`` said, the source opened and (git) the commit."""

    label: str
    to: str
    kind: str
    path: str
    rev: str | None = None
    python_ok: bool | None = None  # None: not parsed
    python_files: int = 0
    pinned: bool = False  # the commit the engine is pinned to now


@dataclass(frozen=True)
class Cell:
    patch: str
    release: str  # its label
    status: str  # one of STATUSES
    verdict: str  # "applies", "offsets ±3", "conflicts: a.py #2", ... (pin bump's words)
    short: str = ""  # the same for a matrix cell: "conflicts: 3 hunks in 2 files"
    upstreamed: str | None = None


@dataclass(frozen=True)
class ScanReport:
    engine: str
    series: str
    patches: tuple[str, ...]
    releases: tuple[Release, ...]
    cells: tuple[Cell, ...]

    @property
    def ok(self) -> bool:
        """Every patch applies (or is already in) at every release, and every tree parses."""
        return all(c.status not in BAD for c in self.cells) and all(
            r.python_ok is not False for r in self.releases
        )

    def cell(self, patch: str, release: str) -> Cell:
        for c in self.cells:
            if c.patch == patch and c.release == release:
                return c
        return Cell(patch, release, "missing", "not scanned", "not scanned")


@dataclass(frozen=True)
class ScanTarget:
    """One release ``pin scan`` opens: ``--to`` as given, its source and revision."""

    to: str  # as given
    source: Path
    rev: str | None = None


def run_scan(
    opts: CheckOptions,
    targets: Sequence[ScanTarget],
    *,
    parse: bool = True,
    progress: ProgressFn | None = None,
) -> ScanReport:
    """Apply the stack of ``opts.series`` at every target in one walk over the series."""
    if not targets:
        raise BadInput("pin scan needs at least one --to REV|SOURCE (or --merge FILE...)")
    if len(targets) > MAX_RELEASES:
        raise BadInput(f"pin scan takes at most {MAX_RELEASES} releases at once; split them into jobs")
    entries = load_series(opts.series, default_strip=opts.strip, reader=opts.reader).entries
    patches = load_stack(opts.series, strip=opts.strip, reader=opts.reader)
    with ExitStack() as stack:
        root = Path(stack.enter_context(scratch_dir("vimesync-scan-")))
        sources, trees = [], []
        for i, t in enumerate(targets):
            src = stack.enter_context(open_source(t.source, t.rev, scratch=root))
            (root / f"r{i}").mkdir()
            sources.append(src)
            trees.append(ScratchTree(root / f"r{i}", source_provider(src), all_hunks=True))
        labels = _labels([_label(t, s.info) for t, s in zip(targets, sources, strict=True)])
        results: list[list[Any]] = [[] for _ in targets]
        for patch in patches:  # one walk: each patch once at every release
            for i, src in enumerate(sources):
                results[i].append(apply_patch(trees[i], patch, src))
        releases, cells = [], []
        for i, (t, src) in enumerate(zip(targets, sources, strict=True)):
            marked = mark_upstreamed(src, tuple(results[i]))
            py = parse_scratch(src, root / f"r{i}", trees[i], opts, progress) if parse else None
            info = src.info
            releases.append(
                Release(
                    labels[i],
                    t.to,
                    info.kind,
                    info.path,
                    info.rev,
                    None
                    if py is None
                    else py.stack_ok,  # a file failing at the release itself is not the stack's
                    0 if py is None else py.files,
                )
            )
            cells += [
                Cell(e.name, labels[i], r.status, verdict(r), short_verdict(r), r.upstreamed)
                for e, r in zip(entries, marked, strict=True)
            ]
    return ScanReport(
        engine=opts.engine,
        series=str(opts.series),
        patches=tuple(e.name for e in entries),
        releases=tuple(releases),
        cells=tuple(cells),
    )


_SHA = re.compile(r"[0-9a-f]{40}")


def _label(target: ScanTarget, info: SourceInfo) -> str:
    """A column's name: the tag or branch as given (``v0.19.0``), else the source's label (a
    commit's first 12 hex digits, ``vllm-0.32.0`` for a wheel)."""
    if target.rev is not None and not _SHA.fullmatch(target.rev.lower()):
        return "".join(ch if ch.isprintable() else "?" for ch in target.rev)[:MAX_NAME]
    return label(info)


def mark_pinned(report: ScanReport, pin_rev: str | None) -> ScanReport:
    """The releases at the commit the engine is pinned to now (its sha, or the rev as the pin
    names it), marked as the current pin."""
    if not pin_rev:
        return report
    pin = pin_rev.lower()
    at_pin = [
        r.to == pin_rev or (len(pin) >= 7 and (r.rev or "").lower().startswith(pin)) for r in report.releases
    ]
    releases = tuple(replace(r, pinned=p) for r, p in zip(report.releases, at_pin, strict=True))
    return replace(report, releases=releases)


def short_verdict(p: PatchResult) -> str:
    """One patch at one release in a few words: a failure counts its hunks and files."""
    if p.status not in BAD:
        return verdict(p)
    done = set(p.already_applied)
    failed = [(f.file, f.hunk) for f in p.failures if (f.file, f.hunk) not in done]
    files = len({f for f, _ in failed})
    counted = f"{plural(len(failed), 'hunk')} in {plural(files, 'file')}"
    if p.status == "partly-applied":
        return f"partly applied ({of_total(len(p.already_applied), p.hunks, 'hunk')}); conflicts: {counted}"
    return f"conflicts: {counted}"


def _labels(labels: list[str]) -> list[str]:
    """Column labels, made unique (``x``, ``x (2)``) so a cell names one release."""
    seen: dict[str, int] = {}
    out = []
    for name in labels:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def scan_to_dict(report: ScanReport) -> dict[str, Any]:
    """The ``--json`` body of ``pin scan`` (what ``--merge`` reads back)."""
    return {
        "ok": report.ok,
        "engine": report.engine,
        "series": report.series,
        "patches": list(report.patches),
        "releases": [
            {
                "label": r.label,
                "to": r.to,
                "kind": r.kind,
                "path": r.path,
                "rev": r.rev,
                "python": None if r.python_ok is None else {"ok": r.python_ok, "files": r.python_files},
                "pinned": r.pinned,
            }
            for r in report.releases
        ],
        "cells": [
            {
                "patch": c.patch,
                "release": c.release,
                "status": c.status,
                "verdict": c.verdict,
                "short": c.short,
                "upstreamed": c.upstreamed,
            }
            for c in report.cells
        ],
    }


# ---------------------------------------------------------------------------------------------
# --merge: per-release documents (one CI job each) into one matrix

MAX_NAME = 300
MAX_PATCHES = 10_000  # as a series holds
Name = Annotated[str, Text(max=MAX_NAME)]


@dataclass(frozen=True)
class _PythonDoc:
    ok: bool
    files: Annotated[int, Range(0, 10_000_000)] = 0


@dataclass(frozen=True)
class _ReleaseDoc:
    label: Name
    to: Name = ""
    kind: Name = ""
    path: Name = ""
    rev: Name | None = None
    python: _PythonDoc | None = None  # None: not parsed
    pinned: bool = False


@dataclass(frozen=True)
class _CellDoc:
    patch: Name
    release: Name
    status: Status
    verdict: Name | None = None  # None: the status
    short: Name = ""
    upstreamed: Name | None = None


@open_keys  # the document's contract keys (ok, exit_code) are not the matrix's
@dataclass(frozen=True)
class _ScanDoc:
    kind: Literal["pin-scan"]
    patches: Annotated[tuple[Name, ...], Size(MAX_PATCHES)]
    releases: Annotated[tuple[_ReleaseDoc, ...], Size(MAX_RELEASES)]
    cells: Annotated[tuple[_CellDoc, ...], Size(MAX_PATCHES * MAX_RELEASES)]
    engine: Name = ""
    series: Name = ""


def report_from_dict(doc: Any, *, where: str) -> ScanReport:
    """A ``pin scan --json`` document read back (a DecodeError naming ``where`` and the key when
    it is not one).

    Only a matrix ``pin scan`` could have written: lists where it writes lists, each patch and
    release named once, one cell per patch and release, and none outside them, so a document
    cannot show one verdict in a cell and count another."""
    scan = decode(_ScanDoc, doc, where=where)
    releases = tuple(
        Release(
            label=r.label,
            to=r.to,
            kind=r.kind,
            path=r.path,
            rev=r.rev,
            python_ok=r.python.ok if r.python else None,
            python_files=r.python.files if r.python else 0,
            pinned=r.pinned,
        )
        for r in scan.releases
    )
    cells = tuple(
        Cell(
            c.patch, c.release, c.status, c.status if c.verdict is None else c.verdict, c.short, c.upstreamed
        )
        for c in scan.cells
    )
    report = ScanReport(scan.engine, scan.series, scan.patches, releases, cells)
    _check_matrix(report, where)
    return report


def _check_matrix(report: ScanReport, where: str) -> None:
    labels = [r.label for r in report.releases]
    if len(report.cells) > max(len(report.patches) * len(labels), 1):
        raise BadInput(f"{where}: more cells than patches times releases")
    if len(set(report.patches)) != len(report.patches):
        raise BadInput(f"{where}: a patch is named twice in patches")
    if len(set(labels)) != len(labels):
        raise BadInput(f"{where}: a release label is named twice in releases")
    seen: set[tuple[str, str]] = set()
    patches, releases = set(report.patches), set(labels)
    for c in report.cells:
        if c.patch not in patches or c.release not in releases:
            raise BadInput(f"{where}: a cell names a patch or release the document does not list")
        if (c.patch, c.release) in seen:
            raise BadInput(f"{where}: two cells for one patch at one release")
        seen.add((c.patch, c.release))


def merge_scans(reports: Sequence[ScanReport]) -> ScanReport:
    """One matrix from several scans: releases in the order given (a label seen twice is made
    unique), patches in series order with any a later scan adds after them."""
    if not reports:
        raise BadInput("pin scan --merge needs at least one document")
    patches = list(dict.fromkeys(p for r in reports for p in r.patches))
    if len(patches) > MAX_PATCHES:
        raise BadInput(f"pin scan --merge: over {MAX_PATCHES:,} patches in all")
    releases: list[Release] = []
    cells: list[Cell] = []
    taken: set[str] = set()
    for r in reports:
        for rel in r.releases:
            name, n = rel.label, 1
            while name in taken:
                n += 1
                name = f"{rel.label} ({n})"
            taken.add(name)
            releases.append(replace(rel, label=name))
            cells += [replace(c, release=name) for c in r.cells if c.release == rel.label]
    if len(releases) > MAX_RELEASES * 4:
        raise BadInput(f"pin scan --merge: over {MAX_RELEASES * 4} releases")
    engines = {r.engine for r in reports}
    return ScanReport(
        engine=reports[0].engine if len(engines) == 1 else ", ".join(sorted(engines)),
        series=reports[0].series,
        patches=tuple(patches),
        releases=tuple(releases),
        cells=tuple(cells),
    )
