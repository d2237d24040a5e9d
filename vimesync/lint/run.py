"""Lint a series: its entries against the files of its folder, then every patch it lists.

The series is read like ``patches check`` reads it (``safefs``: no symlink followed below the
repository, regular files only, size caps), but an entry that ``check`` would refuse is a
finding here, so one run lists everything at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from vimesync import safefs
from vimesync.errors import ConfigError, PatchError
from vimesync.lint.model import Finding, LintResult
from vimesync.lint.rules import header_findings, index_findings, whitespace_findings
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import PatchFile, PatchResult, SeriesEntry
from vimesync.patches.series import MAX_SERIES_BYTES, MAX_SERIES_ENTRIES, MAX_STRIP, read_patch
from vimesync.text import file_lines

_COMMENT = re.compile(r"(^|\s)#.*$")
_STRIP_OPT = re.compile(r"-p(\d{1,6})")
PATCH_SUFFIXES = (".patch", ".diff")
MAX_ORPHAN_SCAN = 10_000  # folder entries looked at for orphans
MAX_ORPHAN_DEPTH = 8

Shown = Callable[[Path], str]


def _shown(path: Path) -> str:
    """A path as a linter prints it: relative to the working directory when below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def lint_series(
    series: Path,
    *,
    strip: int = 1,
    repo: str | None = None,
    offsets: Callable[[], tuple[PatchResult, ...]] | None = None,
) -> LintResult:
    """Every finding of the series and its patches. ``offsets`` (``--strict``) applies the stack
    to the source and returns its results: offsets and failures are findings. It runs only when
    the series and every patch could be read (otherwise those findings come first)."""
    if safefs.input_kind(series) == "dir":
        series = series / "series"
    try:
        data = safefs.read_input(series, max_bytes=MAX_SERIES_BYTES, what="series file")
    except safefs.Missing:
        raise ConfigError(str(series), "series file not found") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            str(series), f"series file is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    findings: list[Finding] = []
    entries = list(_entries(series, text, strip, findings))
    findings += _orphans(series, entries)
    parsed: list[tuple[SeriesEntry, PatchFile]] = []
    for entry in entries:
        shown = _shown(entry.path)
        try:
            raw = read_patch(entry)
            patch = parse_patch(raw, name=entry.name, strip=entry.strip)
        except PatchError as exc:
            reason = str(exc).removeprefix(entry.name).lstrip(":0123456789 ")
            findings.append(Finding(shown, exc.line or 1, "P001", reason))
            continue
        parsed.append((entry, patch))
        findings += _capped(header_findings(shown, patch, repo=repo))
        findings += whitespace_findings(shown, raw, patch)
        findings += _capped(index_findings(shown, patch))
        del raw
    blocking = any(f.code in ("S001", "S003", "S004", "S005", "P001") for f in findings)
    if offsets is not None and parsed and not blocking:
        findings += _applied(parsed, offsets())
    return LintResult(series=_shown(series), patches=len(parsed), findings=tuple(findings))


MAX_PER_CODE = 20  # findings of one code per patch, then one line counting the rest


def _capped(found: Iterator[Finding]) -> list[Finding]:
    """At most MAX_PER_CODE findings of each code, then one saying how many more there are."""
    out: list[Finding] = []
    counts: dict[str, int] = {}
    for f in found:
        counts[f.code] = counts.get(f.code, 0) + 1
        if counts[f.code] <= MAX_PER_CODE:
            out.append(f)
    for code, n in counts.items():
        if n > MAX_PER_CODE:
            last = next(f for f in reversed(out) if f.code == code)
            out.append(Finding(last.path, last.line, code, f"and {n - MAX_PER_CODE} more like it"))
    return out


def _entries(series: Path, text: str, strip: int, findings: list[Finding]) -> Iterator[SeriesEntry]:
    """The series' readable entries; every problem with a line is a finding instead."""
    where = _shown(series)
    folder = safefs.lexical(series.parent)
    seen: dict[tuple[int, int], int] = {}
    count = 0
    for lineno, raw in enumerate(file_lines(text), start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        count += 1
        if count > MAX_SERIES_ENTRIES:
            raise ConfigError(
                str(series), f"more than {MAX_SERIES_ENTRIES} patches in the series", line=lineno
            )
        name, *options = line.split()
        shown = safefs.excerpt(name)
        entry_strip = strip
        for opt in options:
            m = _STRIP_OPT.fullmatch(opt)
            if m and int(m.group(1)) <= MAX_STRIP:
                entry_strip = int(m.group(1))
            else:
                findings.append(
                    Finding(where, lineno, "S005", f"{shown}: option {safefs.excerpt(opt, 20)} (only -pN)")
                )
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            findings.append(
                Finding(where, lineno, "S004", f"{shown} is absolute or leaves the series folder")
            )
            continue
        path = safefs.lexical(folder / name)
        try:
            st = safefs.stat_input(path, root=folder)
        except safefs.Missing:
            findings.append(Finding(where, lineno, "S001", f"{shown}: no such patch file"))
            continue
        except ConfigError as exc:
            reason = exc.message.removeprefix(str(path) + ": ")
            findings.append(Finding(where, lineno, "S004", f"{shown}: {reason}"))
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            findings.append(
                Finding(where, lineno, "S003", f"{shown} is listed twice (first on line {seen[key]})")
            )
            continue
        seen[key] = lineno
        yield SeriesEntry(name=name, path=path, strip=entry_strip, line=lineno)


def _orphans(series: Path, entries: list[SeriesEntry]) -> list[Finding]:
    """Patch files (``*.patch``, ``*.diff``) below the series folder that no entry lists. The walk
    never follows a symlink and stops after MAX_ORPHAN_SCAN entries or MAX_ORPHAN_DEPTH folders."""
    listed = {e.path for e in entries}
    folder = safefs.lexical(series.parent)
    found: list[Finding] = []
    budget = MAX_ORPHAN_SCAN
    stack = [(folder, 0)]
    while stack and budget > 0:
        here, depth = stack.pop()
        try:
            with os.scandir(here) as it:
                names = sorted(it, key=lambda d: d.name)
        except OSError:
            continue
        for d in names:
            budget -= 1
            if budget <= 0:
                break
            if d.name.startswith("."):
                continue
            path = Path(d.path)
            if d.is_dir(follow_symlinks=False):
                if depth < MAX_ORPHAN_DEPTH:
                    stack.append((path, depth + 1))
            elif d.name.lower().endswith(PATCH_SUFFIXES) and path not in listed:
                kind = "a symlink, " if d.is_symlink() else ""
                rel = path.relative_to(folder).as_posix()
                found.append(
                    Finding(
                        _shown(path),
                        1,
                        "S002",
                        f"{kind}not listed in {_shown(series)} ({safefs.excerpt(rel)})",
                    )
                )
    return sorted(found, key=lambda f: f.path)


def _applied(
    parsed: list[tuple[SeriesEntry, PatchFile]], results: tuple[PatchResult, ...]
) -> Iterator[Finding]:
    """O001/O002 from the results of applying the stack, at the hunk's line in the patch."""
    by_name = {e.name: (e, p) for e, p in parsed}
    for r in results:
        if r.name in by_name:
            yield from _capped(_result_findings(r, *by_name[r.name]))


def _result_findings(r: PatchResult, entry: SeriesEntry, patch: PatchFile) -> Iterator[Finding]:
    """O001/O002 of one patch (capped per code by the caller)."""
    shown = _shown(entry.path)
    for o in r.offsets:
        line = _hunk_line(patch, o.file, o.hunk)
        yield Finding(
            shown,
            line,
            "O001",
            f"{safefs.excerpt(o.file)} hunk #{o.hunk} applies at offset {o.offset:+d}",
        )
    for f in r.failures:
        line = _hunk_line(patch, f.file, f.hunk)
        what = f" hunk #{f.hunk}" if f.hunk else ""
        yield Finding(shown, line, "O002", f"{safefs.excerpt(f.file)}{what}: {safefs.excerpt(f.reason, 160)}")


def _hunk_line(patch: PatchFile, file: str, hunk: int) -> int:
    for fp in patch.files:
        if file in (fp.path, fp.old_path, fp.new_path):
            if 0 < hunk <= len(fp.hunks):
                return fp.hunks[hunk - 1].patch_line
            return fp.patch_line or 1
    return 1
