"""``patches check``: apply the engine patch stack to the exact pinned source, then parse every
Python file of the patched tree. Pure orchestration over source/patches/pycheck; no printing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vimesync.checkmodel import CheckReport


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


def run_check(opts: CheckOptions, *, progress: ProgressFn | None = None) -> CheckReport:
    """Apply ``opts.series`` to ``opts.source`` at ``opts.rev`` in a scratch tree and parse it."""
    raise NotImplementedError  # filled in by the integration step
