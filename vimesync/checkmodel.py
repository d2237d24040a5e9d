"""The result of ``vimesync patches check``: source, per-patch outcomes, the Python parse."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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


def check_to_dict(report: CheckReport) -> dict[str, Any]:
    """The ``--json`` document of ``patches check`` (and the report's Validation section)."""
    py = report.python
    return {
        "ok": report.ok,
        "patches_ok": report.patches_ok,
        "engine": report.engine,
        "source": asdict(report.source),
        "series": report.series,
        "patches": [
            {
                "name": p.name,
                "ok": p.ok,
                "skipped": p.skipped,
                "files": p.files,
                "hunks": p.hunks,
                "offsets": [asdict(o) for o in p.offsets],
                "failures": [asdict(f) for f in p.failures],
                "description": p.dep3.description if p.dep3 else None,
            }
            for p in report.patches
        ],
        "python": None
        if py is None
        else {
            "ok": py.ok,
            "files": py.files,
            "cached": py.cached,
            "version": py.version,
            "version_source": py.version_source,
            "interpreter": py.interpreter,
            "failed": [asdict(f) for f in py.failed],
            "conflict_markers": [asdict(m) for m in py.conflict_markers],
            "notes": list(py.notes),
        },
    }
