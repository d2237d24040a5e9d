"""Which config: the ``vimesync.toml`` found from a folder upward to its repository's root.

``--config FILE`` and ``$VIMESYNC_CONFIG`` (set by the job: trusted, like a flag) win over it; see
:func:`vimesync.config.load.load_config`.
"""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.safefs import lexical

CONFIG_NAME = "vimesync.toml"
CONFIG_ENV = "VIMESYNC_CONFIG"  # set by the job (trusted, like a flag)


def discover_config(cwd: Path) -> tuple[Path | None, tuple[Path, ...]]:
    """The first ``vimesync.toml`` from ``cwd`` upward to the repository root (the innermost folder
    holding ``.git``), and the folders looked in. Outside a repository only ``cwd`` is looked in: a
    stray ``/tmp/vimesync.toml`` must not configure every folder below it."""
    start = lexical(cwd)
    chain = (start, *start.parents)
    top = next((i for i, folder in enumerate(chain) if os.path.lexists(folder / ".git")), 0)
    looked: list[Path] = []
    for folder in chain[: top + 1]:
        looked.append(folder)
        if os.path.lexists(folder / CONFIG_NAME):
            return folder / CONFIG_NAME, tuple(looked)
    return None, tuple(looked)
