"""The result of ``vimesync patches check``: source, per-patch outcomes, the Python parse."""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.patches.model import PatchResult
from vimesync.pycheck.model import ParseReport


@dataclass(frozen=True)
class SourceInfo:
    kind: str  # "git" | "directory" | "archive"
    path: str
    rev: str | None  # full resolved sha for git sources, else None


@dataclass(frozen=True)
class CheckReport:
    source: SourceInfo
    series: str  # path of the series file
    patches: tuple[PatchResult, ...]
    python: ParseReport | None  # None when parsing was not reached (a patch failed without --keep-going)
    engine: str = "engine"  # display name from the pin ("vLLM")

    @property
    def patches_ok(self) -> bool:
        return all(p.ok for p in self.patches)

    @property
    def ok(self) -> bool:
        return self.patches_ok and self.python is not None and self.python.ok


def check_to_dict(report: CheckReport) -> dict:
    """The ``--json`` document of ``patches check`` (stable keys; see the README)."""
    py = report.python
    return {
        "ok": report.ok,
        "engine": report.engine,
        "source": {"kind": report.source.kind, "path": report.source.path, "rev": report.source.rev},
        "series": report.series,
        "patches": [
            {
                "name": p.name,
                "ok": p.ok,
                "skipped": p.skipped,
                "files": p.files,
                "hunks": p.hunks,
                "offsets": [{"file": o.file, "hunk": o.hunk, "offset": o.offset} for o in p.offsets],
                "failures": [
                    {
                        "file": f.file,
                        "hunk": f.hunk,
                        "header": f.header,
                        "reason": f.reason,
                        "first_mismatch": f.first_mismatch,
                        "expected": f.expected,
                        "found": f.found,
                        "nearest_line": f.nearest_line,
                    }
                    for f in p.failures
                ],
                "description": p.dep3.description if p.dep3 else None,
            }
            for p in report.patches
        ],
        "python": None
        if py is None
        else {
            "files": py.files,
            "cached": py.cached,
            "version": py.version,
            "version_source": py.version_source,
            "interpreter": py.interpreter,
            "failed": [{"path": f.path, "line": f.line, "message": f.message} for f in py.failed],
            "conflict_markers": [
                {"path": c.path, "line": c.line, "text": c.text} for c in py.conflict_markers
            ],
        },
    }
