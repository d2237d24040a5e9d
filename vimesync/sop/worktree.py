"""A temporary ``git worktree`` at one commit, for the tools that must run on exactly what a
commit holds (``sop record precommit`` at the head, ``sop regress`` at the baseline and the head).

Added detached (no branch is made or moved) in our scratch folder through ``vimesync.git`` (no
hook, filter or fsmonitor runs on the checkout), and removed on the way out, however it is left:
an error, Ctrl-C or SIGTERM (the CLI turns it into an exception, so ``finally`` runs)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from vimesync import git
from vimesync.safefs import remove_tree


@contextlib.contextmanager
def temporary_worktree(repo: Path, commit: str, path: Path) -> Iterator[Path]:
    """``path`` (which must not exist) checked out at ``commit``, removed afterwards."""
    try:
        git.run(repo, ["worktree", "add", "--quiet", "--detach", str(path), commit])
        yield path
    finally:
        with contextlib.suppress(Exception):
            git.run_status(repo, ["worktree", "remove", "--force", "--force", str(path)])
        remove_tree(path)
        with contextlib.suppress(Exception):
            git.run_status(repo, ["worktree", "prune"])
