"""The reference applier: real ``git apply -pN`` in a plain directory.

Used by the differential tests and by a ``--reference`` mode. git runs with ``cwd=root`` and
``GIT_CEILING_DIRECTORIES`` set to root's parent, so it can never discover an enclosing
repository and works like ``patch`` on a plain directory (no index, no ``--unsafe-paths``).
User attribute files are switched off (``XDG_CONFIG_HOME``) so only the tree itself matters.
"""

from __future__ import annotations

import os
from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput


def git_apply(root: Path, patch_path: Path, strip: int) -> tuple[bool, str]:
    """Run ``git apply -p<strip> <patch_path>`` in ``root``; return (applied, stderr)."""
    root = Path(os.path.abspath(root))
    if (root / ".git").exists() or os.path.lexists(root / ".git"):
        # git would treat root as a repository (index, attributes, objects): refuse.
        raise BadInput(f"{root}: contains .git; git apply would not run as on a plain directory")
    env = {
        "GIT_CEILING_DIRECTORIES": str(root.parent),
        "XDG_CONFIG_HOME": os.devnull,
    }
    args = ["apply", f"-p{strip}", "--", str(Path(patch_path).absolute())]
    code, _, err = git.run_status(root, args, env=env)
    return code == 0, err.decode("utf-8", "replace")
