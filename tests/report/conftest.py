"""Fixtures for the report tests: a GitHub stand-in serving one pull request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders.pullbody import FakeGitHub, serve_pull


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, str]]:
    with serve_pull() as served:
        yield served
