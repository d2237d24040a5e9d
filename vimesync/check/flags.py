"""The engine flag group (``--engine``, ``--source``, ``--rev``, ``--series``...): what the flags
say about the engine and its stack, before any pin is read. Apart from the check plan it feeds
(:mod:`vimesync.check.model`) so that a command that only parses flags loads nothing of the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EngineFlags:
    """The engine flag group: what the flags say about the engine and its stack (None: not given).
    Flags win over the pin, the pin over the config (:func:`check_plan`)."""

    engine: str | None = None  # --engine NAME: one engine of several
    source: Path | None = None
    rev: str | None = None
    series: Path | None = None
    strip: int | None = None
    python: str | None = None
    export: Path | None = None
    keep_going: bool = False
    strict: bool = False
    use_cache: bool = True
    applier: str | None = None
    fuzz: int | None = None
    engine_repo: str | None = None  # --engine-repo OWNER/NAME (pin radar, pin bump)

    def pin_flags(self) -> dict[str, object]:
        """The flags that stand for a pin's own settings, by their names (given or not)."""
        values = (self.source, self.rev, self.series, self.strip, self.python, self.export)
        return dict(zip(_FLAG_NAMES, values, strict=True))

    def given(self) -> list[str]:
        """Those of :meth:`pin_flags` that were given."""
        return [f for f, v in self.pin_flags().items() if v is not None]


_FLAG_NAMES = ("--source", "--rev", "--series", "--strip", "--python", "--export")
