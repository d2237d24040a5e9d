"""Fixtures for the CLI tests: a stack and a downstream checkout a pull request controls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.hostile import make_checkout, make_stack
from tests.builders.stack import Stack


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    return make_stack(tmp_path)


@pytest.fixture()
def checkout(tmp_path: Path, stack: Stack) -> Path:
    return make_checkout(tmp_path, stack)
