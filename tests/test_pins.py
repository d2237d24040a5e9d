"""A pin read from git history (the engine rev before the sync) is bounded like any TOML input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.pins import pinned_at


@pytest.mark.parametrize(
    "text",
    [
        '[engine]\nrev = "abc"\nx = ' + "[" * 50_000 + "]" * 50_000 + "\n",
        '[engine]\nrev = "abc"\nx = ' + "9" * 5000 + "\n",
    ],
    ids=["nested", "huge-int"],
)
def test_hostile_pin_in_history_is_ignored_not_a_traceback(tmp_path: Path, text: str) -> None:
    repo = Repo(tmp_path / "down")
    sha = repo.commit("pin", {"pins/e.toml": text})
    assert pinned_at(repo.path, sha, repo.path / "pins/e.toml", "engine", "rev") is None


def test_ordinary_pin_in_history(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "down")
    sha = repo.commit("pin", {"pins/e.toml": '[engine]\nrev = "abc"\n'})
    assert pinned_at(repo.path, sha, repo.path / "pins/e.toml", "engine", "rev") == "abc"
