"""``patches check``: apply the engine patch stack to the exact pinned source, then parse every
Python file of the patched tree. Pure orchestration over source/patches/pycheck; no printing.

The whole tree is never copied: a scratch directory holds only the files the stack touches
(read from the source on first touch), and every other file is parsed where it lies — in
place for a directory, straight from git objects for a repository (whose blob ids are also
the parse cache's keys, so a warm run reads almost nothing).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from vimesync.checkmodel import CheckOptions, CheckReport, ProgressFn
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import PatchFile
from vimesync.patches.series import load_series, read_patch
from vimesync.patches.tree import MODE_DIR, Provider, apply_stack
from vimesync.pycheck.run import parse_patched
from vimesync.safefs import ensure_output_dir, scratch_dir
from vimesync.source import Source, open_source


def load_stack(series_path: Path, *, strip: int) -> list[PatchFile]:
    """Read and parse every patch of the series up front: a malformed or unsafe patch is bad
    input (exit 2, naming the patch) before any source is opened."""
    series = load_series(series_path, default_strip=strip)
    return [parse_patch(read_patch(e), name=e.name, strip=e.strip) for e in series.entries]


def _check_export_dir(export: Path) -> None:
    """Refuse a non-empty or unusable --export before any work, so a late failure is never
    mistaken for a failed check; and a symlink at it or at a folder on its way inside the
    repository (a pull request may commit one to redirect our writes)."""
    ensure_output_dir(export, what="--export")


def source_provider(source: Source) -> Provider:
    """Answer the scratch tree's first-touch questions from the (read-only) source."""
    files = source.list_files()
    dirs = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    for d in list(dirs):
        while "/" in d:
            d = d.rsplit("/", 1)[0]
            dirs.add(d)

    def provide(path: str) -> tuple[bytes, int] | None:
        entry = files.get(path)
        if entry is not None:
            return source.read(path), entry.mode
        if path in dirs:
            return b"", MODE_DIR
        return None

    return provide


def run_check(opts: CheckOptions, *, progress: ProgressFn | None = None) -> CheckReport:
    """Apply ``opts.series`` to ``opts.source`` at ``opts.rev`` in a scratch tree and parse it."""
    patches = load_stack(opts.series, strip=opts.strip)
    if opts.export is not None:
        _check_export_dir(opts.export)
    with (
        scratch_dir("vimesync-check-") as tmp,  # removed however deep the tree a patch made
        open_source(opts.source, opts.rev, scratch=Path(tmp)) as source,
    ):
        scratch = Path(tmp) / "tree"
        scratch.mkdir()
        results = apply_stack(scratch, patches, keep_going=opts.keep_going, provider=source_provider(source))
        changed = _changed(scratch, {p for r in results for p in r.touched})
        python = None
        if all(r.ok for r in results) or opts.keep_going:
            python = parse_patched(
                source, changed, python=opts.python, use_cache=opts.use_cache, progress=progress
            )
        if opts.export is not None:
            _export(source, changed, opts.export)
    return CheckReport(
        source=source.info,
        series=str(opts.series),
        patches=results,
        python=python,
        engine=opts.engine,
    )


def _changed(scratch: Path, touched: Iterable[str]) -> dict[str, Path | None]:
    """The stack's changes as the parser takes them: a scratch file, or None when it is gone.
    lstat only: a patch may create a symlink pointing anywhere, and we never follow one."""
    changed: dict[str, Path | None] = {}
    for rel in sorted(touched):
        p = scratch / rel
        try:
            st = p.lstat()
        except FileNotFoundError:
            changed[rel] = None
            continue
        changed[rel] = p if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) else None
    return changed


def _export(source: Source, changed: dict[str, Path | None], dest: Path) -> None:
    """Write the whole patched tree: untouched files from the source, changed ones from scratch."""
    dest.mkdir(parents=True, exist_ok=True)
    source.export(dest, skip=changed.keys())
    for rel, src in changed.items():
        if src is None:
            continue  # deleted by the stack
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        else:
            out.write_bytes(src.read_bytes())
            out.chmod(src.lstat().st_mode & 0o777)
