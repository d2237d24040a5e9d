"""A commit read through git objects says what the working tree would (vimesync/readers.py).

The head's files are repository content a pull request writes: a symbolic link (at the file or a
folder on the way), a submodule, an oversized file or a path leaving the repository is refused
with the same words as on disk, and nothing of the content reaches an error.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync import git
from vimesync.config import read_config
from vimesync.errors import ConfigError
from vimesync.patches.series import load_series, read_patch
from vimesync.readers import WORKTREE, CommitReader, Reader
from vimesync.safefs import Missing, NotARegularFile

SECRET = "s3cr3t-content-never-echoed"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "r")
    r.commit(
        "layout",
        {
            "pins/e.toml": '[engine]\nseries = "../patches/series"\n',
            "patches/series": "a.patch\n",
            "patches/a.patch": f"{SECRET}\n",
            "big.txt": "x" * 5000,
            "dir/keep.txt": "k\n",
        },
    )
    os.symlink("../patches/a.patch", r.path / "pins/link.patch")
    os.symlink("patches", r.path / "linkdir")
    git.run(r.path, ["add", "-A"])
    git.run(r.path, ["update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub"])
    r.commit("links and a submodule", {})
    return r


def _both(repo: Repo) -> list[Reader]:
    return [WORKTREE, CommitReader(repo.path, git.resolve(repo.path, "HEAD"), repo.path)]


def _error(reader: Reader, path: Path, **kw: object) -> str:
    with pytest.raises(ConfigError) as exc:
        reader.read(path, max_bytes=int(kw.get("max_bytes", 1 << 20)))  # type: ignore[call-overload]
    assert SECRET not in exc.value.message
    return exc.value.message


@pytest.mark.parametrize(
    "rel, want",
    [
        ("pins/link.patch", "refusing to follow a symbolic link"),
        ("linkdir/a.patch", "it is a symbolic link inside"),
        ("nope/x.txt", "no such file"),
        ("dir", "is a directory, not a regular file"),
    ],
)
def test_refusals_read_the_same_from_the_commit_and_the_working_tree(repo: Repo, rel: str, want: str) -> None:
    messages = [_error(reader, repo.path / rel) for reader in _both(repo)]
    assert all(want in m for m in messages), messages
    assert messages[0] == messages[1]  # the same words, the same path as the user knows it


def test_a_submodule_is_not_a_file(repo: Repo) -> None:
    reader = _both(repo)[1]
    with pytest.raises(NotARegularFile, match="is a submodule"):
        reader.read(repo.path / "sub", max_bytes=100)
    with pytest.raises(NotARegularFile, match="is a submodule"):
        reader.kind(repo.path / "sub")


def test_the_size_bound_holds_before_reading(repo: Repo) -> None:
    for reader in _both(repo):
        assert "is over the 100-byte limit" in _error(reader, repo.path / "big.txt", max_bytes=100)


def test_the_commit_is_read_not_the_working_tree(repo: Repo) -> None:
    (repo.path / "patches/series").write_text("b.patch\n")  # uncommitted
    reader = _both(repo)[1]
    series = load_series(repo.path / "patches/series", reader=reader)
    assert [e.name for e in series.entries] == ["a.patch"]
    assert read_patch(series.entries[0], reader=reader) == f"{SECRET}\n".encode()
    with pytest.raises(ConfigError, match="patch file 'b.patch' not found"):
        load_series(repo.path / "patches/series")  # the working tree has no b.patch


def test_a_path_outside_the_repository_is_read_where_it_is(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "flag-named.txt"
    outside.write_text("given by a flag\n")
    reader = _both(repo)[1]
    assert reader.read(outside, max_bytes=100) == b"given by a flag\n"
    assert reader.repository_root(outside) != repo.path


def test_a_nul_byte_in_a_path_is_refused(repo: Repo) -> None:
    with pytest.raises(NotARegularFile, match="NUL"):
        _both(repo)[1].read(repo.path / "a\0b", max_bytes=10)


def test_a_config_read_from_a_commit_keeps_its_files_inside_the_repository(repo: Repo) -> None:
    repo.commit("config in ci/", {"ci/vimesync.toml": '[engine]\npin = "../pins/e.toml"\n'})
    head = git.resolve(repo.path, "HEAD")
    with CommitReader(repo.path, head, repo.path) as reader:
        cfg = read_config(repo.path / "ci/vimesync.toml", reader=reader)
        assert cfg.engine.series == repo.path / "patches/series"
    repo.commit("a pin outside", {"ci/vimesync.toml": '[engine]\npin = "../../elsewhere.toml"\n'})
    with CommitReader(repo.path, git.resolve(repo.path, "HEAD"), repo.path) as reader:
        with pytest.raises(ConfigError, match=r"\[engine\] pin must be inside the repository"):
            read_config(repo.path / "ci/vimesync.toml", reader=reader)


def test_missing_is_missing(repo: Repo) -> None:
    reader = _both(repo)[1]
    assert reader.kind(repo.path / "nothing/here") == "missing"
    with pytest.raises(Missing):
        reader.read(repo.path / "nothing", max_bytes=1)


def test_a_recording_reader_keeps_the_blob_id_of_what_it_read(tmp_path: Path) -> None:
    """What a result rests on, as it was read: the blob id git would give the bytes; a file read
    twice with two contents vouches for neither (None), nor does a file never read."""
    from vimesync.readers import RecordingReader

    f = tmp_path / "policy.toml"
    f.write_bytes(b"a = 1\n")
    reader = RecordingReader()
    assert reader.read_text(f) == "a = 1\n"
    assert reader.blob_read(f) == git.blob_oid(b"a = 1\n")
    assert reader.blob_read(tmp_path / "other.toml") is None
    f.write_bytes(b"a = 2\n")
    reader.read_text(f)
    assert reader.blob_read(f) is None
