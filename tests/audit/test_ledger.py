"""The review ledger is repository content: read and written without following symlinks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vimesync.audit.ledger import ledger_relpath, read_ledger, write_ledger
from vimesync.audit.model import Ledger, Review
from vimesync.errors import ConfigError

LEDGER = Ledger(sync="a..b", reviews=(Review(path="x.py", oid="0" * 40, by="alice", at=""),))


def test_round_trip_creates_the_folders(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    write_ledger(path, LEDGER)
    assert read_ledger(path, "a..b") == LEDGER
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_symlinked_reviews_folder_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a..b.toml").write_text('sync = "a..b"\n')
    repo = tmp_path / "repo"
    (repo / "sop").mkdir(parents=True)
    (repo / "sop/reviews").symlink_to(elsewhere)
    path = repo / ledger_relpath("a..b")
    with pytest.raises(ConfigError, match="reviews: it is a symbolic link"):
        read_ledger(path, "a..b")
    with pytest.raises(ConfigError, match="reviews: it is a symbolic link"):
        write_ledger(path, LEDGER)
    assert (elsewhere / "a..b.toml").read_text() == 'sync = "a..b"\n'


def test_symlinked_ledger_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("TOKEN=x\n")
    path = tmp_path / "repo" / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.symlink_to(secret)
    with pytest.raises(ConfigError, match="symbolic link"):
        read_ledger(path, "a..b")
    with pytest.raises(ConfigError, match="symbolic link"):
        write_ledger(path, LEDGER)
    assert secret.read_text() == "TOKEN=x\n"


def test_deeply_nested_ledger_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.write_text("review = " + "[" * 10_000 + "]" * 10_000 + "\n")
    with pytest.raises(ConfigError, match="nested deeper"):
        read_ledger(path, "a..b")
