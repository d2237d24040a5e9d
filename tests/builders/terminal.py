"""A command run as a person runs it at a terminal (tests only): stdout and stderr on a
pseudo-terminal of a given size, its output read until it exits or a deadline passes."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

# What a job's environment says that would make the command think it is not at a terminal, or
# in CI: never passed on.
_DROPPED = ("COLUMNS", "LINES", "CI", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")


@dataclass(frozen=True)
class Screen:
    code: int
    output: bytes  # stdout and stderr, as the terminal received them

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


def run_in_terminal(*args: str, cwd: Path, columns: int = 100, timeout: float = 120, **env: str) -> Screen:
    """``python -m vimesync ARGS`` in ``cwd`` on a pseudo-terminal ``columns`` wide (killed after
    ``timeout`` seconds: an AssertionError then)."""
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    environ.update({"TERM": "xterm-256color", **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "vimesync", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=side,
        stderr=side,
        env=environ,
        start_new_session=True,
    )
    os.close(side)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"vimesync {' '.join(args)}: still running after {timeout:g}s")
            ready, _, _ = select.select([main], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    return Screen(code, b"".join(chunks))
