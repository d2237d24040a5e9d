"""The CLI as the tests run it: in process (``run``, exit code and captured output) or as a real
process (``run_cli``), as a user or CI runs it (tests only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vimesync.cli.app import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def run_cli(*args: str, cwd: Path | None = None, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """A real process, as a user or CI runs it (``extra_env`` on top of ours)."""
    env = {**os.environ, "COLUMNS": "200", **extra_env}
    return subprocess.run(
        [sys.executable, "-m", "vimesync", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


cli = run_cli
