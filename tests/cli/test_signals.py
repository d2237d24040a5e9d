"""A run killed by a CI timeout (SIGTERM) or Ctrl-C (SIGINT) removes its scratch folders."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.builders.hookworker import wrapper_argv
from tests.builders.stack import ENGINE, Stack

pytestmark = pytest.mark.slow  # real processes, killed mid-run


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_run_removes_the_scratch_folder(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    stack = Stack(tmp_path)
    stack.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\nX = 1\n"})
    # A file whose parse never ends (the test worker's hook): the run is busy until we signal it.
    stack.add("0002-slow.patch", {"eng/slow.py": "# vimesync-test: hang\n"})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    args = ["--source", str(stack.repo.path), "--rev", stack.pin, "--series", str(stack.dir / "series")]
    proc = subprocess.Popen(
        wrapper_argv(tmp_path, "patches", "check", "--no-cache", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for _ in range(1200):  # until the scratch folder exists (a second or so)
            if any(p.name.startswith("vimesync-") for p in tmp.iterdir()) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.3)  # let it reach the parse step, with workers running
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert list(tmp.iterdir()) == []
