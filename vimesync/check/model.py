"""``vimesync patches check`` as data: its options (flags over pins over config) and its result
(source, per-patch outcomes, the Python parse). Light to import: the CLI builds options with it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.config import Config, missing_input
from vimesync.errors import BadInput, ConfigError
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
    engine: str = ""  # display name from the pin ("vLLM"), else from the source (engine_name)
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
    engine: str = ""  # "": named after the source (engine_name)


ProgressFn = Callable[[int, int], None]  # (done, total) while parsing


_DIST = re.compile(r"^([A-Za-z0-9._]+?)-\d")  # sglang-0.5.15.post1-cp311-....whl -> sglang


def engine_name(pin_name: str, source: Path | str | None) -> str:
    """The engine's display name: the pin's, else the source's (a wheel's or sdist's distribution
    name, a folder's name without ``.git``), else "unnamed" -- never the bare word "engine"."""
    if pin_name:
        return pin_name
    if source is not None:
        base = Path(source).name
        m = _DIST.match(base)
        name = m.group(1) if m else re.sub(r"\.git$", "", base)
        if name:
            return name
    return "unnamed"


def _not_git(source: Path) -> bool:
    """An archive or a plain folder (what ``open_source`` would refuse a revision for)."""
    if source.is_file():
        return True
    return source.is_dir() and git.repo_at(source) is None


def _missing(config: Config, what: str, *, flag: str, key: str) -> BadInput:
    """Name the pin that would hold ``key``, or the config key that names the pin."""
    if config.file is not None and config.engine.file is None:
        return missing_input(config, what, flag=flag, key="[engine] pin")
    return missing_input(config, what, flag=flag, key=key, file=config.engine.file)


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
    if src is None:
        raise _missing(config, "no engine source", flag="--source PATH", key="[engine] source")
    if ser is None:
        raise _missing(config, "no patch series", flag="--series FILE", key="[engine] series")
    if rev is None and pin.rev is not None and pin.file is not None and _not_git(src):
        raise ConfigError(
            str(pin.file),
            f"[engine] rev is set, but the engine source {src} is not a git repository: a wheel, sdist "
            "or folder is its own exact pin and has no revision",
            hint=f"remove rev from {pin.file}, or point --source (or [engine] source) at a git clone",
        )
    return CheckOptions(
        source=src,
        series=ser,
        rev=rev or pin.rev,
        strip=pin.strip if strip is None else strip,
        keep_going=keep_going,
        python=python or pin.python,
        export=export,
        use_cache=use_cache,
        engine=engine_name(pin.name, src),
    )
