"""``pin bump``: the stack at the current pin beside the stack at a new rev or source.

One walk over the series applies every patch to three scratch trees, each holding only the files
the stack touches: the current pin, the new pin (the original patches: what ``patches check
--keep-going`` would say there), and with ``--refresh`` the new pin carrying the refreshed patches
(see ``refresh``). Then both patched trees are parsed; the current pin's files come from the parse
cache when it was checked before. Nothing is written here: :func:`plan_writes` turns the result
into file contents and ``write_together`` puts them in place, all or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from vimesync.check.drift import index_drift
from vimesync.check.model import CheckOptions, ProgressFn, failure_docs
from vimesync.check.moved import WhereMoved
from vimesync.check.parse import parse_patched
from vimesync.check.rediff import Scratch
from vimesync.check.refresh import (
    OldSide,
    RefreshContext,
    Refreshed,
    new_paths,
    old_paths,
    refresh_patch,
    state,
)
from vimesync.check.run import changed_files, load_stack, mark_upstreamed, source_provider
from vimesync.errors import BadInput, GitError
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import PatchFile, PatchResult, SeriesEntry
from vimesync.patches.series import MAX_SERIES_BYTES, load_series, read_patch
from vimesync.patches.tree import MODE_LINK, ScratchTree
from vimesync.pycheck.model import ParseReport
from vimesync.safefs import read_input, scratch_dir
from vimesync.sources import Source, SourceInfo, open_source
from vimesync.text import agree, clip, file_lines_bytes, of_total, plural


@dataclass(frozen=True)
class BumpOptions:
    current: CheckOptions  # the stack at the current pin: source, rev, series, strip, python, engine
    to_source: Path  # the new pin's source (the same repository for a new rev)
    to_rev: str | None = None
    refresh: bool = False


@dataclass(frozen=True)
class PatchBump:
    name: str
    line: int  # its line in the series file
    old: PatchResult
    new: PatchResult
    refresh: Refreshed | None = None


@dataclass(frozen=True)
class BumpReport:
    engine: str
    series: Path
    old: SourceInfo
    new: SourceInfo
    patches: tuple[PatchBump, ...]
    old_python: ParseReport | None
    new_python: ParseReport | None

    @property
    def conflicts(self) -> tuple[PatchBump, ...]:
        """The patches that need a hand at the new pin (after --refresh: those it could not merge)."""
        if any(p.refresh is not None for p in self.patches):
            return tuple(p for p in self.patches if p.refresh is not None and p.refresh.action == "conflict")
        return tuple(p for p in self.patches if p.new.status in ("failed", "partly-applied"))

    @property
    def ok(self) -> bool:
        py = self.new_python
        return not self.conflicts and (py is None or py.ok)

    def parsed(self, *, new: bool) -> str | None:
        """What the parse of one side's patched tree says, in words (None: not parsed):
        ``2,859 patched Python files parse``; with some patches not applied it says how many were,
        and with none applied there is nothing the parse could vouch for."""
        py = self.new_python if new else self.old_python
        if py is None:
            return None
        n = len(self.patches)
        applied = sum(1 for p in self.patches if (p.new if new else p.old).status in ("applied", "offsets"))
        if n and not applied:
            return f"{of_total(0, n, 'patch', 'patches')} applied: nothing patched to parse, not checked"
        bad = len(py.failed) + len(py.conflict_markers)
        words = f"{plural(py.files, 'patched Python file')} {agree(py.files, 'parses', 'parse')}"
        if bad:
            words += f" but {bad:,} {agree(bad, 'does', 'do')} not"
        if applied < n:
            words += f" (only {of_total(applied, n, 'patch', 'patches')} applied)"
        return words


def named_apart(to_rev: str | None, new: str) -> bool:
    """``--to`` named the new pin otherwise than its label (a tag, a branch; not its sha): then
    both are shown, ``v0.32.0 (1a2b3c4d5e6f)``."""
    return bool(to_rev) and not (to_rev or "").startswith(new) and not new.startswith(to_rev or "")


def label(info: SourceInfo) -> str:
    """A short name for a pin in a column header or a conflict marker."""
    if info.rev:
        return info.rev[:12]
    name = Path(info.path).name or info.path
    if name.endswith(".whl"):  # name-version-pyver-abi-platform.whl: the first two say it
        return "-".join(name.split("-")[:2])
    for suffix in (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip"):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def apply_patch(tree: ScratchTree, patch: PatchFile, source: Source) -> PatchResult:
    drift = index_drift(tree, patch, source.list_files())
    result = tree.apply(patch)
    return replace(result, drift=drift) if drift else result


def run_bump(opts: BumpOptions, *, progress: ProgressFn | None = None) -> BumpReport:
    """Walk the stack at both pins (and refresh it, with ``opts.refresh``); parse both trees."""
    cur = opts.current
    if cur.source is None:
        raise BadInput("pin bump needs the current source on disk (a pypi: pin is fetched first)")
    entries = load_series(cur.series, default_strip=cur.strip, reader=cur.reader).entries
    patches = load_stack(cur.series, strip=cur.strip, reader=cur.reader)
    with (
        scratch_dir("vimesync-bump-") as tmp,
        open_source(cur.source, cur.rev, scratch=Path(tmp)) as old_src,
        open_source(opts.to_source, opts.to_rev, scratch=Path(tmp)) as new_src,
    ):
        root = Path(tmp)
        trees = {}
        for name, src in (("old", old_src), ("new", new_src), ("ref", new_src)):
            (root / name).mkdir()
            trees[name] = ScratchTree(root / name, source_provider(src), all_hunks=True)
        (root / "git").mkdir()
        scratch = Scratch(root / "git")
        old_label, new_label = label(old_src.info), label(new_src.info)
        ctx = RefreshContext(trees["ref"], scratch, new_label, old_label, WhereMoved(old_src, new_src))
        rows: list[PatchBump] = []
        for entry, patch in zip(entries, patches, strict=True):
            before = state(trees["old"], old_paths(patch))
            old_result = apply_patch(trees["old"], patch, old_src)
            after = state(trees["old"], new_paths(patch))
            new_result = apply_patch(trees["new"], patch, new_src)
            refreshed = None
            if opts.refresh:
                side = OldSide(old_result, before, after)
                refreshed = _refresh(ctx, entry, patch, side)
            rows.append(PatchBump(entry.name, entry.line, old_result, new_result, refreshed))
        old_results = mark_upstreamed(old_src, tuple(r.old for r in rows))
        new_results = mark_upstreamed(new_src, tuple(r.new for r in rows))
        rows = [replace(r, old=o, new=n) for r, o, n in zip(rows, old_results, new_results, strict=True)]
        old_py = parse_scratch(old_src, root / "old", trees["old"], cur, None)
        new_py = parse_scratch(new_src, root / "new", trees["new"], cur, progress)
        return BumpReport(
            engine=cur.engine,
            series=cur.series,
            old=old_src.info,
            new=new_src.info,
            patches=tuple(rows),
            old_python=old_py,
            new_python=new_py,
        )


def _refresh(ctx: RefreshContext, entry: SeriesEntry, patch: PatchFile, side: OldSide) -> Refreshed:
    raw = read_patch(entry)
    # parsed again from the very bytes to splice, so every position matches them
    exact = parse_patch(raw, name=patch.name, strip=entry.strip)
    try:
        return refresh_patch(ctx, raw, exact, side, strip=entry.strip)
    except GitError as exc:
        return Refreshed("conflict", f"git could not diff or merge: {clip(exc.message, 200)}")


def parse_scratch(
    source: Source, scratch: Path, tree: ScratchTree, opts: CheckOptions, progress: ProgressFn | None
) -> ParseReport:
    provider = source_provider(source)
    changed = changed_files(scratch, tree.writers.keys(), provider)
    contents = {p: c[0] if c is not None and c[1] != MODE_LINK else None for p, c in changed.items()}
    return parse_patched(source, contents, python=opts.python, cache_dir=opts.parse_cache, progress=progress)


# ---------------------------------------------------------------------------------------------
# What --write and --refresh change


@dataclass(frozen=True)
class BumpPlan:
    """The files to write, all together: path -> new bytes (and where the conflicts go)."""

    files: dict[Path, bytes]
    conflicts: tuple[tuple[str, str, bytes], ...] = ()  # (patch, path, merged file)


def plan_writes(report: BumpReport, *, refresh: bool, pins: Mapping[Path, bytes] | None = None) -> BumpPlan:
    """The new series and patches (``refresh``) and pin files (``pins``), nothing written."""
    files: dict[Path, bytes] = {}
    conflicts: list[tuple[str, str, bytes]] = []
    if refresh:
        series = load_series(report.series)
        entries = {e.line: e for e in series.entries}
        series_path = series.path
        dropped: dict[int, str] = {}
        for p in report.patches:
            r = p.refresh
            if r is None:
                continue
            if r.action == "rewrite" and r.data is not None:
                files[entries[p.line].path] = r.data
            elif r.action == "drop":
                dropped[p.line] = r.why
            # the work folder gets every merged file of a conflicting patch, the clean ones too:
            # `patches refresh NAME --from DIR` re-makes the patch from all of them
            conflicts += [(p.name, path, data) for path, data in (*r.conflicts, *r.merged)]
        if dropped:
            files[series_path] = comment_out(_read_series(series_path), dropped)
    files.update(pins or {})
    return BumpPlan(files, tuple(conflicts))


def _read_series(path: Path) -> bytes:
    return read_input(path, max_bytes=MAX_SERIES_BYTES, what="series file")


def comment_out(series: bytes, lines: dict[int, str]) -> bytes:
    """``series`` with the given (1-based) lines made comments, each followed by its reason."""
    out = file_lines_bytes(series)
    for n, why in lines.items():
        if not 1 <= n <= len(out):
            raise BadInput(f"series line {n} is gone: the series changed during the bump")
        body = out[n - 1]
        end = body[len(body.rstrip(b"\r\n")) :] or b"\n"
        # one line of plain text: no control character from a source's name gets into the series
        reason = "".join(c if c.isprintable() else "?" for c in " ".join(why.split())).encode()
        out[n - 1] = b"# " + body.rstrip(b"\r\n") + b"  # dropped by vimesync pin bump: " + reason + end
    return b"".join(out)


# ---------------------------------------------------------------------------------------------
# The verdicts, in words and as JSON

MAX_CONFLICT_FILES = 3


def verdict(p: PatchResult) -> str:
    """One patch at one pin: ``applies``, ``offsets ±n``, ``already applied``, ``partly applied
    (k of n hunks)``, ``conflicts: file #hunk …``, ``skipped``."""
    status = p.status
    if status == "applied":
        return "applies"
    if status == "offsets":
        return f"offsets ±{p.max_offset}"
    if status == "already-applied":
        return "already applied"
    if status == "skipped":
        return "skipped"
    done = set(p.already_applied)
    by_file: dict[str, list[str]] = {}
    for f in p.failures:
        if (f.file, f.hunk) not in done:
            by_file.setdefault(f.file, []).append(f"#{f.hunk}" if f.hunk else f"({clip(f.reason, 60)})")
    shown = [f"{file} {' '.join(hunks)}" for file, hunks in list(by_file.items())[:MAX_CONFLICT_FILES]]
    more = len(by_file) - MAX_CONFLICT_FILES
    conflicts = "conflicts: " + "; ".join(shown) + (f"; and {plural(more, 'more file')}" if more > 0 else "")
    if status == "partly-applied":
        return f"partly applied ({of_total(len(p.already_applied), p.hunks, 'hunk')}); {conflicts}"
    return conflicts


def _side(p: PatchResult) -> dict[str, Any]:
    return {
        "status": p.status,
        "verdict": verdict(p),
        "max_offset": p.max_offset,
        "offsets": [asdict(o) for o in p.offsets],
        "failures": failure_docs(p),
        "already_applied_hunks": len(p.already_applied),
        "index_drift": [asdict(d) for d in p.drift],
        "upstreamed": p.upstreamed,
    }


def _python(py: ParseReport | None) -> dict[str, Any] | None:
    if py is None:
        return None
    return {
        "ok": py.ok,
        "files": py.files,
        "cached": py.cached,
        "version": py.version,
        "failed": [asdict(f) for f in py.failed],
        "conflict_markers": [asdict(m) for m in py.conflict_markers],
    }


def bump_to_dict(report: BumpReport, *, written: list[str] | None = None) -> dict[str, Any]:
    """The ``--json`` document of ``pin bump``."""
    return {
        "ok": report.ok,
        "engine": report.engine,
        "series": str(report.series),
        "old": {"source": asdict(report.old), "python": _python(report.old_python)},
        "new": {"source": asdict(report.new), "python": _python(report.new_python)},
        "patches": [
            {
                "name": p.name,
                "old": _side(p.old),
                "new": _side(p.new),
                "refresh": None
                if p.refresh is None
                else {
                    "action": p.refresh.action,
                    "why": p.refresh.why,
                    "conflicts": [path for path, _ in p.refresh.conflicts],
                    "merged": [path for path, _ in p.refresh.merged],
                    "moved": [{"path": path, "to": to} for path, to in p.refresh.moved],
                },
            }
            for p in report.patches
        ],
        "written": written or [],
    }
