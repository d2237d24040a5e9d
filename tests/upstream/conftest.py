from __future__ import annotations

import pytest

from tests.builders.upstream import Upstream, build_upstream


@pytest.fixture(scope="package")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    """One shared upstream with every shape (read-only: tests must not modify it)."""
    return build_upstream(tmp_path_factory.mktemp("up") / "slime")
