"""A fake GitHub holding CI evidence for pull request 7 (head HEAD after OLDER and OLD), and
``vimesync ci`` run as a process against it (tests only)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve

HEAD = "a" * 40
OLD = "b" * 40
OLDER = "c" * 40


@contextmanager
def evidence_server() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub(range(1, 3))
    fake.heads[7] = HEAD
    fake.pr_commits[7] = [OLDER, OLD, HEAD]
    with serve(fake) as url:
        yield fake, url


def ci_cli(url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``vimesync ci *args`` as a real process against the fake GitHub at ``url``."""
    env = {
        **os.environ,
        "VIMESYNC_GITHUB_API": url,
        "GITHUB_TOKEN": TOKEN,
        "VIMESYNC_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    return subprocess.run(
        [sys.executable, "-m", "vimesync", "ci", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
