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


def test_a_pin_that_is_no_file_at_the_commit_reads_as_none(tmp_path: Path) -> None:
    """Absent, a folder, a symlink (its target is not followed), or a path git cannot name in one
    line: no pin, never an error (the pin is read through one ``cat-file`` as ``REV:PATH``)."""
    import os

    repo = Repo(tmp_path / "down")
    sha = repo.commit(
        "folder", {"pins/e.toml/x": '[engine]\nrev = "abc"\n', "real.toml": '[engine]\nrev = "x"\n'}
    )
    assert pinned_at(repo.path, sha, repo.path / "pins/e.toml", "engine", "rev") is None
    assert pinned_at(repo.path, sha, repo.path / "pins/none.toml", "engine", "rev") is None
    assert pinned_at(repo.path, "0" * 40, repo.path / "real.toml", "engine", "rev") is None
    assert pinned_at(repo.path, sha, repo.path / "a\nb.toml", "engine", "rev") is None
    os.symlink("real.toml", repo.path / "link.toml")
    repo.git("add", "link.toml")
    sha = repo.commit("link")
    os.unlink(repo.path / "link.toml")  # the commit's symlink, not the work tree's, is read
    assert pinned_at(repo.path, sha, repo.path / "link.toml", "engine", "rev") is None
    assert pinned_at(repo.path, sha, repo.path / "real.toml", "engine", "rev") == "x"
