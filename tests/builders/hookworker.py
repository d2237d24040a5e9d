"""A parse worker for tests: the real one (``vimesync/pycheck/_worker.py``, run unchanged) with
hooks that simulate what hostile input can do to a parser. A source containing
``# vimesync-test: crash`` makes the worker exit at once (code 70), ``hang`` makes it sleep
forever, ``alloc`` makes it allocate 64 GiB (a MemoryError under the pool's RLIMIT_AS).

The pool starts whatever ``vimesync.pycheck.pool.WORKER`` names: :func:`use_hook_worker` points
it here for one test; :func:`wrapper_argv` does the same for a ``vimesync`` run in a subprocess.
Nothing of this ships in the wheel.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vimesync.pycheck import pool

SCRIPT = r"""
import os, sys, time
from importlib.util import module_from_spec, spec_from_file_location

spec = spec_from_file_location("_worker", {real!r})
worker = module_from_spec(spec)
spec.loader.exec_module(worker)
real_parse = worker.parse


def parse(data, feature_version):
    if b"# vimesync-test: crash" in data:
        os._exit(70)
    if b"# vimesync-test: hang" in data:
        while True:
            time.sleep(3600)
    if b"# vimesync-test: alloc" in data:
        bytearray(64 << 30)
    return real_parse(data, feature_version)


worker.parse = parse
sys.exit(worker.main(sys.argv[1:]))
"""


def write_hook_worker(folder: Path) -> Path:
    script = folder / "hookworker.py"
    script.write_text(SCRIPT.format(real=str(pool.WORKER)))
    return script


def use_hook_worker(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """Make every pool of this test start the hooked worker (written under ``folder``)."""
    script = write_hook_worker(folder)
    monkeypatch.setattr(pool, "WORKER", script)
    return script


def wrapper_argv(folder: Path, *args: str) -> list[str]:
    """``python -m vimesync *args`` with the hooked worker, for a test that runs the CLI as a process."""
    script = write_hook_worker(folder)
    code = (
        "import runpy; from pathlib import Path; from vimesync.pycheck import pool; "
        f"pool.WORKER = Path({str(script)!r}); "
        "runpy.run_module('vimesync', run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", code, *args]
