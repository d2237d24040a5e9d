"""The demo the sop commands run on: built once per test module (``built``), and for each test
(``demo``) its sync worktree as the folder, no token or CI marker of the machine in the
environment, and what a test changed there (its records, sop/gates.toml) put back after."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from vimesync.demo.build import Demo, build_demo

# What the machine running the tests may have set that would change what a sop command does.
MACHINE_ENV = ("GITHUB_TOKEN", "GH_TOKEN", "CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    monkeypatch.chdir(built.downstream)
    for name in MACHINE_ENV:
        monkeypatch.delenv(name, raising=False)
    gates = built.downstream / "sop/gates.toml"
    before = gates.read_bytes()
    yield built
    shutil.rmtree(built.downstream / "sop/records", ignore_errors=True)
    if gates.is_symlink() or gates.read_bytes() != before:
        gates.unlink()  # never write through a link into the shipped data
        gates.write_bytes(before)
