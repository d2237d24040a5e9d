"""The demo from an ordinary install, not only an editable one.

pip byte-compiles every ``.py`` of a wheel, the demo engine's data files included, so an installed
vimesync has ``__pycache__/`` folders inside ``demo/data/engine``. The demo must build its engine
from its own list of files, or the engine commit (and so the pinned sha) changes. This test lays
the package out as an install does (files copied, then ``compileall``, as pip runs it) and runs the
demo from there in a subprocess. ``.ci/run`` does the real thing once: wheel, fresh venv, demo.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vimesync.demo.build import ENGINE_FILES, LAYOUT_FILES, data_dir

pytestmark = pytest.mark.slow  # a byte-compiled install of the demo

PACKAGE = Path(__file__).resolve().parents[2] / "vimesync"


def _installed_copy(site: Path) -> Path:
    """The package as pip installs it: its files, then every .py byte-compiled."""
    dest = site / "vimesync"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert compileall.compile_dir(dest, quiet=1)
    return dest


def test_demo_runs_from_a_byte_compiled_install(tmp_path: Path) -> None:
    dest = _installed_copy(tmp_path / "site")
    assert any((dest / "demo/data/engine/vllm").rglob("*.pyc"))  # what pip leaves there
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "vimesync", "demo", "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "unknown revision" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["title"].startswith("[Sync]")


def test_the_file_lists_are_the_data_folder() -> None:
    # A file added to demo/data must be listed in build.py (and a listed file must exist).
    data = data_dir()
    found = {
        p.relative_to(data).as_posix()
        for p in data.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    listed = {f"engine/{name}" for name in ENGINE_FILES} | set(LAYOUT_FILES)
    assert found == listed
