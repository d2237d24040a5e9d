"""Writing a checked patch into the scratch directory, as git's ``write_out_results``: phase 0
removes, phase 1 creates, in patch order; every write through ``O_NOFOLLOW`` folder descriptors,
never through a symlink."""

from __future__ import annotations

import errno
import os
import stat

from vimesync import nofollow
from vimesync.git import MODE_LINK
from vimesync.patches.scratchcheck import Planned
from vimesync.patches.scratchview import Refused, ScratchView, mode_kind
from vimesync.safefs import excerpt


class ScratchWrite(ScratchView):
    """Writing plans into the scratch directory; mixed into ScratchTree."""

    def _write(self, plans: list[Planned], touched: dict[str, None]) -> None:
        """git's ``write_out_results``: phase 0 removes, phase 1 creates, in patch order; the
        paths written go to ``touched`` as they are. An OSError (the file system refusing a path
        or running out of room) is Refused naming the path, never a bare message."""
        rel = ""
        try:
            for plan in plans:
                fp = plan.fp
                if plan.is_delete or not (plan.old_path is None or fp.is_copy):
                    assert plan.old_path is not None
                    rel = plan.old_path
                    self._remove(rel, rmdir_empty=plan.is_delete or fp.is_rename)
                    touched[rel] = None
            for plan in plans:
                if plan.new_path is not None:
                    rel = plan.new_path
                    self._create(rel, plan.new_mode, plan.result or b"")
                    touched[rel] = None
        except OSError as exc:
            raise Refused(f"unable to write {excerpt(rel)}: {exc.strerror or 'failed'}") from None

    def _remove(self, rel: str, *, rmdir_empty: bool) -> None:
        self._mark_written(rel)
        try:
            with nofollow.parent_dir(self.root, rel) as (fd, name):
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    st = None  # only in the source: nothing on disk to remove
                if st is not None and stat.S_ISDIR(st.st_mode):
                    os.rmdir(name, dir_fd=fd)
                elif st is not None:
                    os.unlink(name, dir_fd=fd)
        except nofollow.NotInTree as exc:
            if exc.errno != errno.ENOENT:  # only reachable if the tree changed under us
                raise Refused(f"'{rel}' is beyond a symbolic link or file") from None
            return
        parent = os.path.dirname(rel)
        while rmdir_empty and parent:  # git's remove_path: emptied parents go too
            try:
                with nofollow.parent_dir(self.root, parent) as (fd, name):
                    os.rmdir(name, dir_fd=fd)
            except OSError:
                break
            parent = os.path.dirname(parent)

    def _create(self, rel: str, mode: int, data: bytes) -> None:
        self._mark_written(rel)
        try:
            with nofollow.parent_dir(self.root, rel, create=True) as (fd, name):
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    st = None
                if st is not None and stat.S_ISDIR(st.st_mode):  # an emptied directory in the way
                    os.rmdir(name, dir_fd=fd)
                elif st is not None:  # replaced within this patch
                    os.unlink(name, dir_fd=fd)
                if mode_kind(mode) == MODE_LINK:
                    # git's symlink(buf, path): the target ends at the first NUL byte.
                    os.symlink(data.split(b"\0", 1)[0], name, dir_fd=fd)
                    return
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
                # the umask applies, as for git
                out = os.open(name, flags, 0o777 if mode & 0o100 else 0o666, dir_fd=fd)
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
        except nofollow.NotInTree:  # only reachable if the tree changed under us
            raise Refused(f"'{rel}' is beyond a symbolic link or file") from None
