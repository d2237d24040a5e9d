"""``vimesync patches check`` as data: its options (flags over pins over config) and its result
(source, per-patch outcomes, the Python parse). Light to import: the CLI builds options with it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.patches.model import PatchResult
from vimesync.pycheck.model import ParseReport
from vimesync.repopaths import repository_path
from vimesync.sources.model import SourceInfo


@dataclass(frozen=True)
class CheckReport:
    source: SourceInfo
    series: str  # path of the series file
    patches: tuple[PatchResult, ...]
    python: ParseReport | None  # None when parsing was not reached (a patch failed without --keep-going)
    engine: str = "engine"  # display name from the pin ("vLLM")
    # What opening the source decided for the user ("no revision given: using HEAD (<sha>)",
    # "skipped 2 submodule(s)...", "stripped the archive's top-level folder 'x'")
    source_notes: tuple[str, ...] = ()

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
        "source": {**asdict(report.source), "notes": list(report.source_notes)},
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


@dataclass(frozen=True)
class CheckOptions:
    source: Path
    series: Path
    rev: str | None = None
    strip: int = 1
    keep_going: bool = False
    python: str | None = None  # "3.12"; None: what the tree declares, else the running interpreter
    export: Path | None = None
    use_cache: bool = True
    engine: str = "engine"


ProgressFn = Callable[[int, int], None]  # (done, total) while parsing


def check_options(
    config: Config,
    *,
    source: Path | None = None,
    rev: str | None = None,
    series: Path | None = None,
    strip: int | None = None,
    python: str | None = None,
    keep_going: bool = False,
    export: Path | None = None,
    use_cache: bool = True,
) -> CheckOptions:
    """Merge flags over the config and engine pin (flags win); BadInput naming what is missing."""
    pin = config.engine
    src = repository_path(source, config, "engine_source")
    ser = series or pin.series
    where = f" (or set it in {pin.file})" if pin.file else " (or set it in an engine pin, see pins/)"
    if src is None:
        raise BadInput(f"no engine source: pass --source PATH{where}")
    if ser is None:
        raise BadInput(f"no patch series: pass --series FILE{where}")
    return CheckOptions(
        source=src,
        series=ser,
        rev=rev or pin.rev,
        strip=pin.strip if strip is None else strip,
        keep_going=keep_going,
        python=python or pin.python,
        export=export,
        use_cache=use_cache,
        engine=pin.name,
    )
