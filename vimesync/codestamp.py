"""Which vimesync worked a fact out: its version and the name, size and time of every module of
the package. A fact one run keeps for the next (``vimesync sync`` then ``sync --continue``: the
walk, the head's carried PRs, the check of an unchanged stack) is keyed with it, so that a fact
kept by one build is never taken by another: an upgrade between two runs, or an edit of a
development install, works everything out again."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

from vimesync import __version__


@lru_cache(maxsize=1)
def code_stamp() -> str:
    """The stamp of the running vimesync (a few hundred ``stat`` calls, once per process)."""
    root = os.path.dirname(os.path.abspath(__file__))
    parts = [__version__]
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                st = os.stat(path, follow_symlinks=False)
                parts.append(f"{os.path.relpath(path, root)} {st.st_size} {st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
