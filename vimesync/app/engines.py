"""Which engines a report (or ``sop status``) checks, and with which options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.check.model import CheckOptions, check_options, check_plan
from vimesync.config import Config, select_engine
from vimesync.report.generate import EngineInput


@dataclass(frozen=True)
class EngineFlags:
    """The engine flags of a report (None: not given)."""

    engine: str | None = None
    source: Path | None = None
    rev: str | None = None
    series: Path | None = None
    strip: int | None = None
    keep_going: bool = False

    def given(self) -> dict[str, Any]:
        flags = {"source": self.source, "rev": self.rev, "series": self.series, "strip": self.strip}
        return {k: v for k, v in flags.items() if v is not None}


def several(cfg: Config, flags: EngineFlags) -> bool:
    return len(cfg.engines) > 1 or flags.engine is not None


def single_check(cfg: Config, flags: EngineFlags) -> CheckOptions | None:
    """The one engine's check options, or None when it has no source or no series to check."""
    if (flags.source or cfg.engine.source or cfg.engine.package) is None:
        return None
    if (flags.series or cfg.engine.series) is None:
        return None
    return check_options(
        cfg,
        source=flags.source,
        rev=flags.rev,
        series=flags.series,
        strip=flags.strip,
        keep_going=flags.keep_going,
        require_exact=True,
    )


def engine_inputs(cfg: Config, flags: EngineFlags) -> tuple[EngineInput, ...]:
    """Every engine of a config that names several (or the one ``--engine`` names): checked when
    it has a source, else its series alone. With several engines a flag cannot say which engine
    it is for, so it is refused (check_plan says so, naming them)."""
    given = flags.given()
    if flags.engine is None and given:
        check_plan(cfg, **given)  # raises, naming the engines
    pins = [select_engine(cfg, flags.engine)] if flags.engine else list(cfg.engines)
    inputs = []
    for pin in pins:
        source = given.get("source") or pin.source or pin.package
        series = given.get("series") or pin.series
        if source and series:
            (opts,) = check_plan(
                cfg, engine=pin.key or pin.name, require_exact=True, keep_going=flags.keep_going, **given
            )
            inputs.append(EngineInput(pin=pin, check=opts))
        else:
            inputs.append(EngineInput(pin=pin, series=series, strip=given.get("strip")))
    return tuple(inputs)
