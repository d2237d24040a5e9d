"""``patches check``: apply the engine patch stack to the exact pinned source, then parse every
Python file of the patched tree. Pure orchestration over source/patches/pycheck; no printing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vimesync.checkmodel import CheckReport
from vimesync.config import Config
from vimesync.errors import BadInput


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
    src = source or pin.source
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


def run_check(opts: CheckOptions, *, progress: ProgressFn | None = None) -> CheckReport:
    """Apply ``opts.series`` to ``opts.source`` at ``opts.rev`` in a scratch tree and parse it."""
    raise NotImplementedError  # filled in by the integration step
