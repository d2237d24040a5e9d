"""Checking one patch against the tree in memory, as git's ``check_patch_list`` does: every
section checked and its result computed before anything is written.

Within a patch git applies sections in order and a path touched twice is patched from the first
result (its ``fn_table``); renames and copies always read the original file. Paths are checked
again here (the parser validates them, the tree never trusts them); a section that would read or
write beyond a symlink makes the whole patch a PatchError; a write git would abort half way (a
file where a directory must go, a non-empty directory in the way, a name too long) is refused
before anything is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from vimesync import nofollow
from vimesync.errors import PatchError
from vimesync.git import MODE_DIR, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK
from vimesync.patches.apply import apply_content
from vimesync.patches.model import FilePatch, HunkFailure, HunkOffset, PatchFile
from vimesync.patches.scratchview import MissingFile, Refused, ScratchView, Unsafe, mode_kind
from vimesync.safefs import excerpt

_TO_BE_DELETED = "to-be-deleted"
_WAS_DELETED = "was-deleted"
_GOES_AWAY, _IN_RESULT = 1, 2


@dataclass(frozen=True)
class Planned:
    """One FilePatch checked and computed in memory, ready to write."""

    fp: FilePatch
    old_path: str | None  # None when (inferred to be) a creation
    new_path: str | None
    new_mode: int
    result: bytes | None  # None for a deletion
    partial: bool = False  # GNU patch: some hunks failed, ``result`` holds the ones that applied

    @property
    def is_delete(self) -> bool:
        return self.new_path is None


@dataclass(frozen=True)
class _Preimage:
    """What one section patches (git's ``check_preimage``): ``path`` None when it creates the file."""

    path: str | None
    data: bytes
    mode: int | None  # the old mode: the patch's, else the file's
    file_mode: int | None  # the mode the file has (an earlier section's result, else the tree's)


_CREATED = _Preimage(None, b"", None, None)


def check_rel(patch: str, path: str) -> str:
    # Last line of defence: the parser validates paths, but the tree never trusts them.
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise PatchError(patch, f"unsafe path {excerpt(path)}", file=excerpt(path))
    if "\0" in path:
        raise PatchError(patch, "path contains NUL", file=path)
    return path


def _going_away(fps: tuple[FilePatch, ...]) -> tuple[dict[str, object], dict[str, int]]:
    """git's first pass over a patch: the paths it deletes or renames away (``fn``), and the
    symlinks it removes or makes."""
    fn: dict[str, object] = {}
    symlinks: dict[str, int] = {}
    for fp in fps:
        if fp.old_path is not None and (fp.new_path is None or fp.is_rename):
            fn[fp.old_path] = _TO_BE_DELETED
        if fp.old_path is not None and fp.old_mode and mode_kind(fp.old_mode) == MODE_LINK:
            symlinks[fp.old_path] = symlinks.get(fp.old_path, 0) | _GOES_AWAY
        if fp.new_path is not None and fp.new_mode and mode_kind(fp.new_mode) == MODE_LINK:
            symlinks[fp.new_path] = symlinks.get(fp.new_path, 0) | _IN_RESULT
    return fn, symlinks


class PatchCheck(ScratchView):
    """git's ``check_patch_list`` over a :class:`ScratchView`; mixed into ScratchTree."""

    def _plan(
        self, patch: PatchFile, *, all_hunks: bool, diagnose: bool = True
    ) -> tuple[list[Planned], list[HunkOffset], list[HunkFailure]]:
        """git's ``check_patch_list`` for one patch, in memory: the plans to write, the hunks that
        moved, and the failures (PatchError for an unsafe patch). With failures the plans are what
        GNU patch would leave (every section that applied, and the ``partial`` ones: a file with
        the hunks that applied; the git applier has none of those): written only under GNU's
        semantics (see ``ScratchTree.apply``)."""
        fps = patch.files
        for fp in fps:
            for p in (fp.old_path, fp.new_path):
                if p is not None:
                    check_rel(patch.name, p)
        self._components = {}
        self._removing = {fp.old_path for fp in fps if fp.old_path and (fp.new_path is None or fp.is_rename)}
        fn, symlinks = _going_away(fps)
        plans: list[Planned] = []
        offsets: list[HunkOffset] = []
        failures: list[HunkFailure] = []
        for fp in fps:
            try:
                plan, found_offsets, hunk_failures = self._check(fp, fn, symlinks, all_hunks, diagnose)
            except Unsafe as exc:
                raise PatchError(patch.name, str(exc), file=fp.path, line=fp.patch_line or None) from None
            except Refused as exc:
                missing = isinstance(exc, MissingFile)
                failure = HunkFailure(file=fp.path, hunk=0, header="", reason=str(exc), missing=missing)
                failures.append(failure)
                continue
            except OSError as exc:  # the scratch tree cannot hold the path: git's "does not apply"
                reason = f"{excerpt(fp.path)}: {exc.strerror or 'cannot be read'}"
                failures.append(HunkFailure(file=fp.path, hunk=0, header="", reason=reason))
                continue
            offsets.extend(found_offsets)
            if hunk_failures:
                failures.extend(hunk_failures)
                if plan is None:
                    continue
            assert plan is not None
            plans.append(plan)
            if plan.new_path is not None:
                fn[plan.new_path] = plan
            if plan.old_path is not None and (plan.new_path is None or fp.is_rename):
                fn[plan.old_path] = _WAS_DELETED
        return plans, offsets, failures

    def _check(
        self, fp: FilePatch, fn: dict[str, object], symlinks: dict[str, int], all_hunks: bool, diagnose: bool
    ) -> tuple[Planned | None, tuple[HunkOffset, ...], tuple[HunkFailure, ...]]:
        """git's ``check_patch`` + ``apply_data`` for one section, in memory."""
        new = fp.new_path
        pre = self._preimage(fp, fn)
        new_mode = fp.new_mode
        if new is not None:
            new_mode = self._new_mode(fp, pre, fn)
            self._check_not_beyond_symlink(new, symlinks)
            self._check_name_lengths(new)
        mode = self.mode
        creating = pre.path is None
        if mode.applier == "gnu-patch":
            from vimesync.patches.gnuapply import apply_content_gnu  # GNU's rules: only when asked for

            applied = apply_content_gnu(pre.data, fp, creating=creating, fuzz=mode.fuzz, forward=mode.forward)
        else:
            applied = apply_content(pre.data, fp, creating=creating, all_hunks=all_hunks, diagnose=diagnose)
        if not applied.ok:
            if applied.partial is None or new is None:
                return None, applied.offsets, applied.failures
            # GNU patch: the hunks that applied are written even so (see PatchCheck._plan)
            left = Planned(fp, pre.path, new, new_mode or MODE_FILE, applied.partial, partial=True)
            return left, applied.offsets, applied.failures
        if new is not None and mode_kind(new_mode or MODE_FILE) not in (mode_kind(MODE_FILE), MODE_LINK):
            raise Refused(f"{new}: unsupported mode {new_mode:o}")
        plan = Planned(fp, pre.path, new, new_mode or MODE_FILE, applied.data)
        return plan, applied.offsets, ()

    def _preimage(self, fp: FilePatch, fn: dict[str, object]) -> _Preimage:
        """git's ``check_preimage`` + ``load_preimage``: the content a section patches, from an
        earlier section of the patch (``fn``) or the tree; none when the file is created."""
        old = fp.old_path
        if old is None:
            return _CREATED
        previous = None
        if not (fp.is_copy or fp.is_rename):
            previous = fn.get(old)
            if previous == _WAS_DELETED:
                raise Refused(f"path {old} has been renamed/deleted")
            if previous == _TO_BE_DELETED:
                previous = None
        if isinstance(previous, Planned):
            st_mode = previous.new_mode
            data = previous.result or b""
        else:
            entry = self.lookup(old)
            if entry is None:
                if not fp.new_if_missing:
                    raise MissingFile(f"{old}: No such file or directory")
                return _CREATED
            data, st_mode = entry
            if st_mode == MODE_DIR:
                st_mode = MODE_GITLINK
        old_mode = fp.old_mode or st_mode
        if mode_kind(st_mode) != mode_kind(old_mode):
            raise Refused(f"{old}: wrong type")
        if st_mode == MODE_GITLINK:
            raise Refused(f"failed to read {old}: submodule (gitlink) patches are not supported")
        return _Preimage(old, data, old_mode, st_mode)

    def _new_mode(self, fp: FilePatch, pre: _Preimage, fn: dict[str, object]) -> int | None:
        """The mode of the section's new path (git's ``check_to_create`` where it is created, and
        the old and new modes' agreement): the patch's, else inferred from the preimage."""
        new = fp.new_path
        assert new is not None
        creating = pre.path is None
        new_mode = fp.new_mode
        if new_mode is None and not creating:
            new_mode = pre.file_mode
        if creating or fp.is_rename or fp.is_copy:
            self._check_to_create(new, fn)
            if new_mode is None:
                new_mode = MODE_FILE if creating else pre.mode
        if not creating:
            if new_mode is None:
                new_mode = pre.mode
            assert new_mode is not None and pre.mode is not None
            if mode_kind(new_mode) != mode_kind(pre.mode):
                raise Refused(f"new mode ({new_mode:o}) of {new} does not match old mode ({pre.mode:o})")
        return new_mode

    def _check_to_create(self, new: str, fn: dict[str, object]) -> None:
        """git's ``check_to_create``: nothing in the way of a file this section creates."""
        ok_if_exists = fn.get(new) in (_TO_BE_DELETED, _WAS_DELETED)
        if self._follows_into_a_loop(new):
            raise Refused(f"{new}: Too many levels of symbolic links")
        if not ok_if_exists and self.symlink_prefix(new) is None:
            entry = self._entry(new)
            if entry is not None and entry[1] != MODE_DIR:
                raise Refused(f"{new}: already exists in working directory")
            if entry is not None and not self._dir_clears(new):
                raise Refused(f"{new}: a directory is in the way")

    def _dir_clears(self, rel: str) -> bool:
        """Will git's phase 0 remove directory ``rel`` before creating a file there? Only when
        every file under it is deleted or renamed away by this patch and no subdirectory is
        empty (git removes emptied parents one deletion at a time, bottom up)."""
        if self.provider is not None and any(
            p not in self._written and p not in self._removing for p in self.provider.files_under(rel)
        ):
            return False  # an untouched file of the source is still there
        if nofollow.lstat(self.root, rel) is None:
            return True  # only in the source, and every file of it goes away
        for dirpath, dirnames, filenames in os.walk(self.root / rel):  # never follows a symlink
            if not dirnames and not filenames:
                return False
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                if os.path.relpath(os.path.join(dirpath, name), self.root) not in self._removing:
                    return False
        return True

    def _check_not_beyond_symlink(self, rel: str, symlinks: dict[str, int]) -> None:
        """git's ``path_is_beyond_symlink``: no leading component is or becomes a symlink.
        Also refuse a leading component that is a file this patch keeps: git would fail
        only while writing, after it wrote other files; we fail before writing anything."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if self._component(prefix) in (MODE_FILE, MODE_EXEC) and prefix not in self._removing:
                raise Refused(f"cannot create '{rel}': '{prefix}' is a file")
        for i in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:i])
            change = symlinks.get(prefix, 0)
            if change & _IN_RESULT:
                raise Unsafe(f"affected file '{rel}' is beyond a symbolic link ('{prefix}')")
            if change & _GOES_AWAY:
                continue
            if self._component(prefix) == MODE_LINK:
                raise Unsafe(f"affected file '{rel}' is beyond a symbolic link ('{prefix}')")

    def _check_name_lengths(self, rel: str) -> None:
        """A component the file system cannot hold (git: "unable to write file ...: File name too
        long"): refused before anything is written, like the other write failures."""
        for part in rel.split("/"):
            if len(os.fsencode(part)) > self._name_max:
                raise Refused(f"cannot create {excerpt(rel)}: File name too long")
