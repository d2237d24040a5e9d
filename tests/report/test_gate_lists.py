"""The lists of the report's gates in the help, the docs and the SOP are REPORT_GATES, in order."""

from __future__ import annotations

import re
from pathlib import Path

from vimesync.cli import report as report_cli
from vimesync.sop.gates import GATE_NAMES, REPORT_GATES

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_report_covers_carried() -> None:
    assert "carried" in REPORT_GATES
    assert [g for g in GATE_NAMES if g in REPORT_GATES] == list(REPORT_GATES)  # the SOP's order


def test_help_docs_and_sop_list_the_report_gates() -> None:
    plain = ", ".join(REPORT_GATES)
    assert f"({plain})" in _flat(report_cli.__doc__ or "")
    assert f"({plain})" in _flat((ROOT / "sop/SYNC.md").read_text())
    ticked = ", ".join(f"`{g}`" for g in REPORT_GATES)
    assert f"— {ticked} —" in _flat((ROOT / "docs/report.md").read_text())
