"""vimesync's cache folder (parse results, GitHub responses), from the job's environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """vimesync's cache folder (parse results, GitHub responses): ``$VIMESYNC_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/vimesync``, else ``~/.cache/vimesync``. From the job's environment only."""
    env = os.environ if env is None else env
    if env.get("VIMESYNC_CACHE_DIR"):
        return Path(env["VIMESYNC_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "vimesync"
    return Path.home() / ".cache" / "vimesync"
