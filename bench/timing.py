"""What the benches share: one ``vimesync`` process timed, with a cache folder of its own.

Imported by the bench scripts, which run as ``python bench/bench_X.py`` (this folder first on
``sys.path``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def vimesync(args: list[str], cache: Path) -> float:
    """Seconds one ``python -m vimesync ARGS`` took, with ``VIMESYNC_CACHE_DIR`` at ``cache``;
    exits naming the command when it fails (exit 0 and 1 are results, not failures)."""
    env = {**os.environ, "VIMESYNC_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "vimesync", *args], env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"vimesync {' '.join(args)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}"
        )
    return elapsed
