"""The fork every bot test runs against (tests/builders/botrun.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.botrun import bot_fork
from tests.builders.fakefork import FakeFork
from tests.builders.pair import Pair


@pytest.fixture()
def fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Pair, FakeFork]]:
    with bot_fork(tmp_path, monkeypatch) as made:
        yield made
