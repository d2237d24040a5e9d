"""A result's notes reach stderr once: the emitter says them (cli.emit), and no renderer of the
result's text says them again (``sync --continue`` after a committed review printed its "the head
moved" note twice, and a carry's or a radar's notes were doubled the same way)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from vimesync.app.carry import AbortResult, CarryResult
from vimesync.app.flags import OutputFlags
from vimesync.app.radar import RadarResult
from vimesync.app.syncresult import SyncResult
from vimesync.carry.model import CarryStatus
from vimesync.cli.emit import Emit
from vimesync.cli.render.carry import render_carry
from vimesync.cli.render.radar import render_radar
from vimesync.cli.render.sync import render_sync
from vimesync.settings import Settings

NOTE = "a note for the test"


@pytest.mark.parametrize(
    ("result", "render"),
    [
        (SyncResult(steps=(), notes=(NOTE,)), render_sync),
        (CarryResult(CarryStatus.NOTHING, base="a" * 40, tip="b" * 40, notes=(NOTE,)), render_carry),
        (AbortResult(None, None, notes=(NOTE,)), render_carry),
        (RadarResult("vllm", "vllm-project/vllm", None, (), notes=(NOTE,)), render_radar),
    ],
    ids=["sync", "carry", "carry-abort", "radar"],
)
def test_a_results_notes_are_said_once(
    capsys: pytest.CaptureFixture[str], result: Any, render: Callable[[Any], None]
) -> None:
    Emit(OutputFlags(), Settings.capture()).result(result, render)
    assert capsys.readouterr().err.count(NOTE) == 1
