"""A command run as a maintainer pastes it into bash (tests only): ``vimesync`` on PATH is this
checkout's, so a next step a stop prints is run exactly as printed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import vimesync

ROOT = Path(vimesync.__file__).parent.parent


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` through ``bash -c`` in ``cwd`` (a ``vimesync`` script beside it, on PATH)."""
    bin_ = cwd.parent / "bin"
    bin_.mkdir(exist_ok=True)
    script = bin_ / "vimesync"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m vimesync "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)
