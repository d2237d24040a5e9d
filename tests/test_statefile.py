"""The one resumable state file (vimesync/statefile.py) under the carry's and the sync's: in the
git common dir, created once (O_EXCL), rewritten atomically, bounded, and read back through the
decoder; a file vimesync did not write is refused naming the file and the key, never a value."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pytest

from tests.builders.gitrepo import Repo
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import CONTROL, Text
from vimesync.statefile import Location, StateFile


@dataclass
class Progress:
    name: Annotated[str, Text(max=40, forbid=CONTROL, what="a name")]
    done: list[str] = field(default_factory=list)
    next: int = 0


def _rules(state: Progress) -> None:
    if state.next > len(state.done):
        raise ValueError("next")


@pytest.fixture()
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit("one", {"a": "1\n"})
    return r


def _file(repo: Path, max_bytes: int = 4096) -> StateFile[Progress]:
    return StateFile.of(
        repo, "vimesync-test.json", Progress, max_bytes=max_bytes, what="test state", hint="abort"
    )


BUSY = BadInput("busy")


def test_created_once_saved_read_back_and_removed(repo: Repo) -> None:
    file = _file(repo.path)
    assert file.path == repo.path / ".git" / "vimesync-test.json" and file.read() is None
    file.create(Progress("p"), BUSY)
    with pytest.raises(BadInput, match="busy"):
        file.create(Progress("q"), BUSY)  # O_EXCL: a second run cannot start
    file.save(Progress("p", ["a"], 1))
    assert file.read(_rules) == Progress("p", ["a"], 1)
    file.remove()
    assert not file.exists() and file.read() is None
    file.remove()  # removing what is gone is no error


def test_a_linked_worktree_shares_the_file(repo: Repo, tmp_path: Path) -> None:
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    _file(repo.path).create(Progress("p"), BUSY)
    assert _file(tmp_path / "wt").read() == Progress("p")


def test_a_state_past_the_cap_is_never_written(repo: Repo) -> None:
    file = _file(repo.path, max_bytes=64)
    with pytest.raises(BadInput, match="this test state would take .* bytes, past 64"):
        file.create(Progress("p", ["x" * 100]), BUSY)
    assert not file.exists()


SECRET = "hunter2\x1b[2J"
HOSTILE: dict[str, tuple[bytes, str]] = {
    "not JSON": (b"{" + SECRET.encode(), "invalid JSON"),
    "not UTF-8": (b'{"name": "\xff\xfe' + SECRET.encode() + b'"}', "not UTF-8"),
    "past the cap": (b'{"name": "' + b"x" * 5000 + b'"}', "over the 4096-byte limit"),
    "a list": (b"[1]", "not a test state vimesync can read (expected a table)"),
    "a wrong type": (
        b'{"name": "p", "done": [1]}',
        "not a test state vimesync can read (done[0]: expected a string)",
    ),
    "a control character": (
        b'{"name": "p\\u001b[2Jhunter2"}',
        "not a test state vimesync can read (name: expected a name (no control characters))",
    ),
    "a NUL": (b'{"name": "p\\u0000"}', "(name: expected a name (no control characters))"),
    "an unknown key": (b'{"name": "p", "extra": "hunter2"}', "(unknown key 'extra')"),
    "a missing key": (b'{"done": []}', "(name: missing)"),
    "a bool for a count": (b'{"name": "p", "next": true}', "(next: expected a whole number)"),
    "deep nesting": (b'{"name": "p", "done": ' + b"[" * 100 + b"]" * 100 + b"}", "nested deeper than"),
    "a rule it breaks": (b'{"name": "p", "next": 3}', "not a test state vimesync can read (next)"),
}


@pytest.mark.parametrize(("data", "expected"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_state_vimesync_did_not_write_is_refused_naming_file_and_key(
    repo: Repo, data: bytes, expected: str
) -> None:
    file = _file(repo.path)
    file.path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        file.read(_rules)
    message = str(info.value)
    assert message.startswith(str(file.path)) and expected in message, message
    assert "hunter2" not in message and "\x1b" not in message and "\x00" not in message


def test_a_symlink_or_a_fifo_in_its_place_is_refused(repo: Repo, tmp_path: Path) -> None:
    file = _file(repo.path)
    (tmp_path / "elsewhere.json").write_text('{"name": "p"}')
    file.path.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ConfigError, match="symbolic link"):
        file.read()
    with pytest.raises(ConfigError, match="symbolic link|refusing"):
        file.save(Progress("p"))
    assert (tmp_path / "elsewhere.json").read_text() == '{"name": "p"}'
    file.path.unlink()
    os.mkfifo(file.path)
    with pytest.raises(ConfigError, match="not a regular file|FIFO|fifo"):
        file.read()  # never blocks on it


@dataclass
class Located:
    where: Location


def _located(repo: Path) -> StateFile[Located]:
    return StateFile.of(repo, "vimesync-where.json", Located, max_bytes=4096, what="test state", hint="abort")


def test_the_carry_and_sync_states_name_locations_by_the_one_checked_type() -> None:
    from vimesync.app import syncstate
    from vimesync.carry import state as carry_state

    assert carry_state.AbsolutePath is Location and syncstate.AbsolutePath is Location


@pytest.mark.parametrize(
    "where",
    [
        "/proc/self/cwd",  # a pseudo file system: sizes lie, reads leak the process
        "/tmp/../proc/1/root",  # the same, behind a ../
        "/dev/shm/../../sys/kernel",
        "relative/hunter2",  # never written: vimesync writes absolute paths
        "/tmp/hunter2\x1b[2J",  # a control character: refused, never shown
        "/tmp/hunter2\0",
    ],
)
def test_a_state_naming_a_location_no_run_could_have_started_with_is_refused(repo: Repo, where: str) -> None:
    file = _located(repo.path)
    file.save(Located("/tmp/fine"))
    assert file.read() == Located("/tmp/fine")
    file.path.write_text(json.dumps({"where": where}))
    with pytest.raises(ConfigError) as info:
        file.read()
    message = str(info.value)
    assert "where" in message and "hunter2" not in message and "\x1b" not in message, message


def test_a_state_naming_a_symlink_into_proc_is_refused(repo: Repo, tmp_path: Path) -> None:
    link = tmp_path / "innocent"
    os.symlink("/proc/self", link)  # its name is harmless, its real place is not
    file = _located(repo.path)
    file.path.write_text(json.dumps({"where": str(link)}))
    with pytest.raises(ConfigError, match="outside /proc"):
        file.read()
