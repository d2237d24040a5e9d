"""Scratch folders whose removal never raises, however deep or odd the tree a patch made."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from vimesync.safefs.reach import DIR_FLAGS


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """``tempfile.TemporaryDirectory`` whose cleanup never raises: a tree a patch made (however
    deep or odd) is removed as far as possible, and a failure is not a traceback."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        remove_tree(Path(path))


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it without following symlinks; never raises.

    ``shutil.rmtree`` first; when it fails (RecursionError on a very deep tree, an odd entry),
    the tree is flattened instead: children of a non-empty folder are moved up into ``path``, so
    no more than two descriptors are open and nothing recurses."""
    try:
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    with contextlib.suppress(OSError):
        _flatten_remove(path)
        os.rmdir(path)


def _flatten_remove(path: Path) -> None:
    top = os.open(path, DIR_FLAGS)
    moved = 0
    try:
        while True:
            names = os.listdir(top)
            progress = False
            for name in names:
                try:
                    st = os.stat(name, dir_fd=top, follow_symlinks=False)
                    if not stat.S_ISDIR(st.st_mode):
                        os.unlink(name, dir_fd=top)
                        progress = True
                        continue
                    with contextlib.suppress(OSError):
                        os.rmdir(name, dir_fd=top)
                        progress = True
                        continue
                    sub = os.open(name, DIR_FLAGS, dir_fd=top)
                    try:
                        for child in os.listdir(sub):
                            moved += 1
                            os.rename(child, f".vimesync-rm-{moved}", src_dir_fd=sub, dst_dir_fd=top)
                            progress = True
                    finally:
                        os.close(sub)
                except OSError:
                    continue
            if not names or not progress:
                return
    finally:
        os.close(top)
