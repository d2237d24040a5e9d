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
