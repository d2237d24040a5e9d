"""Apply parsed patches to a scratch directory, atomically per patch, like ``git apply``.

One patch file is one ``git apply`` invocation: every FilePatch is checked and computed in
memory first (git's ``check_patch_list``), and only when all of them succeed is anything
written (git's two-phase ``write_out_results``: removals, then creations). Within a patch
git applies sections in order and a path touched twice is patched from the first result
(its ``fn_table``); renames and copies always read the original file. We mirror that.

Security (patches come from untrusted PRs): every read and write walks the path one component
at a time from ``root`` with ``O_NOFOLLOW`` folder descriptors (``vimesync.nofollow``); nothing
is read or written through a symlink, whether it was in the tree or created by an earlier
patch, and nothing outside ``root``. A patch reading or writing beyond a symlink is refused
(PatchError naming the path; git refuses these too), as are paths that are not plain relative
paths.

Lazy sources: a :class:`Provider` answers for paths not yet in the scratch directory: ``entry(path)
-> (bytes, mode) | None`` (mode 0o100644/0o100755, 0o120000 for a symlink whose bytes are its
target, 0o040000 for a directory) and ``files_under(folder)`` (every file and symlink below a
folder). Once the tree writes or deletes a path, the scratch directory is the truth for it; a
folder of the source exists as long as one of its files does (git has no empty folders), so a
folder every patch so far has emptied is gone, and one that still holds an untouched file is not.
The default (no provider) is the scratch directory alone: the full tree.

Where we differ from git, on purpose: a patch git would abort while writing (a file where a
directory must go, a non-empty directory where a file or symlink must go) fails here before
anything is written, where git leaves the files it wrote first; gitlink (submodule) entries are
refused; a symlink pointing outside the tree is never followed, not even to ask, as git's
``lstat`` of a new path would, whether the path beyond it loops (git's verdict there depends on
the machine's files; ours does not).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from vimesync import nofollow
from vimesync.errors import PatchError
from vimesync.git import MODE_DIR, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK
from vimesync.patches.apply import NOT_TRIED, apply_content
from vimesync.patches.model import FilePatch, HunkFailure, HunkOffset, IndexDrift, PatchFile, PatchResult
from vimesync.patches.reverse import reverse_patch
from vimesync.safefs import excerpt

S_IFMT = 0o170000

_TO_BE_DELETED = "to-be-deleted"
_WAS_DELETED = "was-deleted"
_GOES_AWAY, _IN_RESULT = 1, 2


class _Refused(Exception):
    """A check failed; the message is the reason (turned into a file-level HunkFailure)."""


class _Missing(_Refused):
    """The file the patch changes does not exist."""


class _Unsafe(_Refused):
    """The patch would read or write through a symlink: not a failed hunk but a hostile or broken
    patch, refused as bad input (PatchError, exit 2) like ``..`` and ``.git`` paths."""


@dataclass(frozen=True)
class _Planned:
    """One FilePatch checked and computed in memory, ready to write."""

    fp: FilePatch
    old_path: str | None  # None when (inferred to be) a creation
    new_path: str | None
    new_mode: int
    result: bytes | None  # None for a deletion

    @property
    def is_delete(self) -> bool:
        return self.new_path is None


def _kind(mode: int) -> int:
    return mode & S_IFMT


def _check_rel(patch: str, path: str) -> str:
    # Last line of defence: the parser validates paths, but the tree never trusts them.
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise PatchError(patch, f"unsafe path {excerpt(path)}", file=excerpt(path))
    if "\0" in path:
        raise PatchError(patch, "path contains NUL", file=path)
    return path


def read_entry(root: Path, rel: str) -> tuple[bytes, int] | None:
    """(bytes, mode) of ``root/rel``, walked without following any symlink (a path below a symlink
    or a file does not exist: None); a symlink's bytes are its target."""
    try:
        got = nofollow.read_entry(root, rel)
    except OSError as exc:
        raise _Refused(f"{rel}: not a regular file") if exc.errno == errno.EINVAL else exc from None
    if got is None:
        return None
    st, data = got
    if stat.S_ISLNK(st.st_mode):
        return data, MODE_LINK
    if stat.S_ISDIR(st.st_mode):
        return b"", MODE_DIR
    return data, MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE


@dataclass(frozen=True)
class Provider:
    """Read-only answers about the original tree (see the module doc)."""

    entry: Callable[[str], tuple[bytes, int] | None]
    files_under: Callable[[str], Iterable[str]]


def directory_provider(source: Path) -> Provider:
    """A provider that reads original files from another directory (a plain-directory source)."""
    top = Path(os.path.abspath(source))

    def files_under(folder: str) -> Iterable[str]:
        if read_entry(top, folder) != (b"", MODE_DIR):
            return
        for dirpath, dirnames, filenames in os.walk(top / folder):  # never descends into a symlink
            rel = os.path.relpath(dirpath, top).replace(os.sep, "/")
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                yield f"{rel}/{name}"

    return Provider(entry=lambda rel: read_entry(top, rel), files_under=files_under)


class ScratchTree:
    """A scratch directory that patches are applied to, plus an optional lazy provider."""

    def __init__(self, root: Path, provider: Provider | None = None, *, all_hunks: bool = False) -> None:
        self.root = Path(os.path.abspath(root))
        self.provider = provider
        self.all_hunks = all_hunks  # try a file's hunks after its first failure (--keep-going)
        self._written: set[str] = set()  # paths whose truth is now the scratch directory
        self._written_below: set[str] = set()  # the folders holding a path of _written
        self._removing: set[str] = set()  # paths the patch being applied deletes or renames away
        self._components: dict[str, int | None] = {}  # leading directories seen by this check
        self.writers: dict[str, str] = {}  # path -> the last patch that wrote or deleted it
        try:
            self._name_max = os.pathconf(self.root, "PC_NAME_MAX")
        except (OSError, ValueError):
            self._name_max = 255

    # -- reading ------------------------------------------------------------------------------

    def _disk(self, rel: str) -> tuple[bytes, int] | None:
        return read_entry(self.root, rel)

    def _entry(self, rel: str) -> tuple[bytes, int] | None:
        """The current (bytes, mode) of ``rel`` in the tree the patches see, assuming its leading
        components are folders. The scratch directory only holds what patches wrote, so it
        wins; else the source, where a folder exists while one of its files is still there."""
        disk = self._disk(rel)
        if disk is not None or self.provider is None:
            return disk
        got = self.provider.entry(rel)
        if got is None:
            return None
        if got[1] != MODE_DIR:
            return None if rel in self._written else got
        return got if self._source_files_left(rel) else None

    def _source_files_left(self, folder: str) -> bool:
        """Does the source still hold a file below ``folder`` that no patch wrote or deleted?"""
        assert self.provider is not None
        if folder not in self._written_below:
            return True  # nothing below was touched, and a source folder holds files
        return any(p not in self._written for p in self.provider.files_under(folder))

    def _component(self, rel: str) -> int | None:
        """The kind of a leading component (None: missing). Cached while one patch is checked
        (nothing on disk changes until it is written)."""
        if rel not in self._components:
            got = self._entry(rel)
            self._components[rel] = None if got is None else got[1]
        return self._components[rel]

    def symlink_prefix(self, rel: str) -> str | None:
        """The first leading component of ``rel`` that is a symlink (or not a directory)."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            kind = self._component(prefix)
            if kind is None:
                return None
            if kind != MODE_DIR:
                return prefix
        return None

    def _follows_into_a_loop(self, rel: str) -> bool:
        """Would ``lstat(rel)`` fail with ELOOP? git's check_to_create lstats a new path before
        anything is written, following symlinks in its leading components, and fails on any
        error but "missing". Resolved inside the tree only: a link leaving it (absolute, or above
        the root) is never followed here, and counts as leading nowhere."""
        todo = rel.split("/")
        resolved: list[str] = []
        hops = 0
        while todo:
            name = todo.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not resolved:
                    return False
                resolved.pop()
                continue
            path = "/".join([*resolved, name])
            kind = self._component(path)
            if kind is None or not todo:
                return False
            if kind == MODE_DIR:
                resolved.append(name)
            elif kind == MODE_LINK:
                hops += 1
                got = self._entry(path)
                target = got[0].split(b"\0", 1)[0] if got else b""
                if hops > 40:  # Linux's MAXSYMLINKS
                    return True
                if target.startswith(b"/"):
                    return False
                todo = os.fsdecode(target).split("/") + todo
            else:
                return False  # ENOTDIR: a missing file as far as git is concerned
        return False

    def lookup(self, rel: str) -> tuple[bytes, int] | None:
        """The current (bytes, mode) of ``rel``; _Refused when a component is a symlink."""
        blocked = self.symlink_prefix(rel)
        if blocked is not None and self._component(blocked) != MODE_LINK:
            raise _Refused(f"{rel}: Not a directory ('{blocked}' is a file)")
        if blocked is not None:
            raise _Unsafe(f"reading from '{rel}' beyond a symbolic link ('{blocked}')")
        return self._entry(rel)

    # -- one patch ----------------------------------------------------------------------------

    def current(self, rel: str) -> tuple[bytes, int] | None:
        """The (bytes, mode) of ``rel`` in the tree as the next patch meets it; None when missing or
        out of reach (beyond a symlink or a file)."""
        self._components = {}
        try:
            return self.lookup(rel)
        except (_Refused, OSError):
            return None
        finally:
            self._components = {}

    def apply(self, patch: PatchFile) -> PatchResult:
        """Apply ``patch`` (one ``git apply`` invocation): check all in memory, then write. When it
        fails, find out whether it is (partly) in the tree already (see :meth:`already_applied`)."""
        plans, offsets, failures = self._plan(patch, all_hunks=self.all_hunks)
        touched: dict[str, None] = {}
        self._components = {}  # the write phase changes directories
        if not failures:
            try:
                self._write(plans, touched)
            except _Refused as exc:  # only reachable if the tree changed under us
                failures.append(HunkFailure(file="", hunk=0, header="", reason=str(exc)))
            for rel in touched:
                self.writers[rel] = patch.name
        already: tuple[tuple[str, int], ...] = ()
        reverse = False
        if failures and any(f.file for f in failures) and not any(_exhausted(f) for f in failures):
            already, reverse = self.already_applied(patch, failures)
        return PatchResult(
            name=patch.name,
            ok=not failures,
            files=len(patch.files),
            hunks=patch.hunk_count,
            offsets=tuple(offsets),
            failures=_located(failures, patch.files),
            touched=tuple(touched),  # what was written, also when writing stopped half way
            dep3=patch.dep3,
            already_applied=already,
            reverse_applies=reverse,
        )

    def already_applied(
        self, patch: PatchFile, failures: list[HunkFailure]
    ) -> tuple[tuple[tuple[str, int], ...], bool]:
        """Try a failed patch in reverse against the same tree (``git apply -R --check``, nothing
        written): whether the whole of it reverse-applies, and which of the hunks that failed
        forward (every hunk tried, as with --keep-going) apply in reverse."""
        reverse = reverse_patch(patch)
        try:
            if not self.all_hunks:  # the forward failures after a file's first one were not tried
                _, _, failures = self._plan(patch, all_hunks=True, diagnose=False)
            _, _, back = self._plan(reverse, all_hunks=True, diagnose=False)
        except PatchError:  # reversed, a path would be reached through a symlink: not applied
            return (), False
        finally:
            self._components = {}
        names = [fp.path for fp in patch.files]
        back_names = [fp.path for fp in reverse.files]
        to_forward = dict(zip(back_names, names, strict=True))
        failed_back = {(to_forward.get(f.file, f.file), f.hunk) for f in back}
        failed_fwd = {(f.file, f.hunk) for f in failures}
        already = []
        for fp in patch.files:
            file_fwd = (fp.path, 0) in failed_fwd
            file_back = (fp.path, 0) in failed_back
            for nth in range(1, len(fp.hunks) + 1):
                if file_back or (fp.path, nth) in failed_back:
                    continue
                if file_fwd or (fp.path, nth) in failed_fwd or not back:
                    already.append((fp.path, nth))
        return tuple(already), not back

    def _plan(
        self, patch: PatchFile, *, all_hunks: bool, diagnose: bool = True
    ) -> tuple[list[_Planned], list[HunkOffset], list[HunkFailure]]:
        """git's ``check_patch_list`` for one patch, in memory: the plans to write, the hunks that
        moved, and the failures (PatchError for an unsafe patch)."""
        fps = patch.files
        for fp in fps:
            for p in (fp.old_path, fp.new_path):
                if p is not None:
                    _check_rel(patch.name, p)
        fn: dict[str, object] = {}
        self._components = {}
        self._removing = {fp.old_path for fp in fps if fp.old_path and (fp.new_path is None or fp.is_rename)}
        symlinks: dict[str, int] = {}
        for fp in fps:
            if fp.old_path is not None and (fp.new_path is None or fp.is_rename):
                fn[fp.old_path] = _TO_BE_DELETED
            if fp.old_path is not None and fp.old_mode and _kind(fp.old_mode) == MODE_LINK:
                symlinks[fp.old_path] = symlinks.get(fp.old_path, 0) | _GOES_AWAY
            if fp.new_path is not None and fp.new_mode and _kind(fp.new_mode) == MODE_LINK:
                symlinks[fp.new_path] = symlinks.get(fp.new_path, 0) | _IN_RESULT
        plans: list[_Planned] = []
        offsets: list[HunkOffset] = []
        failures: list[HunkFailure] = []
        for fp in fps:
            try:
                plan, found_offsets, hunk_failures = self._check(fp, fn, symlinks, all_hunks, diagnose)
            except _Unsafe as exc:
                raise PatchError(patch.name, str(exc), file=fp.path, line=fp.patch_line or None) from None
            except _Refused as exc:
                missing = isinstance(exc, _Missing)
                failures.append(
                    HunkFailure(file=fp.path, hunk=0, header="", reason=str(exc), missing=missing)
                )
                continue
            except OSError as exc:  # the scratch tree cannot hold the path: git's "does not apply"
                reason = f"{excerpt(fp.path)}: {exc.strerror or 'cannot be read'}"
                failures.append(HunkFailure(file=fp.path, hunk=0, header="", reason=reason))
                continue
            offsets.extend(found_offsets)
            if hunk_failures:
                failures.extend(hunk_failures)
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
    ) -> tuple[_Planned | None, tuple[HunkOffset, ...], tuple[HunkFailure, ...]]:
        """git's ``check_patch`` + ``apply_data`` for one section, in memory."""
        old, new = fp.old_path, fp.new_path
        old_mode, new_mode = fp.old_mode, fp.new_mode
        data = b""
        creating = old is None
        if old is not None:  # check_preimage + load_preimage
            previous = None
            if not (fp.is_copy or fp.is_rename):
                previous = fn.get(old)
                if previous == _WAS_DELETED:
                    raise _Refused(f"path {old} has been renamed/deleted")
                if previous == _TO_BE_DELETED:
                    previous = None
            if isinstance(previous, _Planned):
                st_mode = previous.new_mode
                data = previous.result or b""
            else:
                entry = self.lookup(old)
                if entry is None:
                    if not fp.new_if_missing:
                        raise _Missing(f"{old}: No such file or directory")
                    old, creating = None, True
                    st_mode = 0
                else:
                    data, st_mode = entry
                    if st_mode == MODE_DIR:
                        st_mode = MODE_GITLINK
            if old is not None:
                if not old_mode:
                    old_mode = st_mode
                if _kind(st_mode) != _kind(old_mode):
                    raise _Refused(f"{old}: wrong type")
                if st_mode == MODE_GITLINK:
                    raise _Refused(f"failed to read {old}: submodule (gitlink) patches are not supported")
                if new_mode is None and new is not None:
                    new_mode = st_mode
        if new is not None and (creating or fp.is_rename or fp.is_copy):  # check_to_create
            ok_if_exists = fn.get(new) in (_TO_BE_DELETED, _WAS_DELETED)
            if self._follows_into_a_loop(new):
                raise _Refused(f"{new}: Too many levels of symbolic links")
            if not ok_if_exists and self.symlink_prefix(new) is None:
                entry = self._entry(new)
                if entry is not None and entry[1] != MODE_DIR:
                    raise _Refused(f"{new}: already exists in working directory")
                if entry is not None and not self._dir_clears(new):
                    raise _Refused(f"{new}: a directory is in the way")
            if new_mode is None:
                new_mode = MODE_FILE if creating else old_mode
        if new is not None and old is not None:
            if new_mode is None:
                new_mode = old_mode
            assert new_mode is not None and old_mode is not None
            if _kind(new_mode) != _kind(old_mode):
                raise _Refused(f"new mode ({new_mode:o}) of {new} does not match old mode ({old_mode:o})")
        if new is not None:
            self._check_not_beyond_symlink(new, symlinks)
            self._check_name_lengths(new)
        applied = apply_content(data, fp, creating=creating, all_hunks=all_hunks, diagnose=diagnose)
        if not applied.ok:
            return None, applied.offsets, applied.failures
        if new is not None and _kind(new_mode or MODE_FILE) not in (_kind(MODE_FILE), MODE_LINK):
            raise _Refused(f"{new}: unsupported mode {new_mode:o}")
        plan = _Planned(fp, old, new, new_mode or MODE_FILE, applied.data)
        return plan, applied.offsets, ()

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
                raise _Refused(f"cannot create '{rel}': '{prefix}' is a file")
        for i in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:i])
            change = symlinks.get(prefix, 0)
            if change & _IN_RESULT:
                raise _Unsafe(f"affected file '{rel}' is beyond a symbolic link ('{prefix}')")
            if change & _GOES_AWAY:
                continue
            if self._component(prefix) == MODE_LINK:
                raise _Unsafe(f"affected file '{rel}' is beyond a symbolic link ('{prefix}')")

    def _check_name_lengths(self, rel: str) -> None:
        """A component the file system cannot hold (git: "unable to write file ...: File name too
        long"): refused before anything is written, like the other write failures."""
        for part in rel.split("/"):
            if len(os.fsencode(part)) > self._name_max:
                raise _Refused(f"cannot create {excerpt(rel)}: File name too long")

    # -- writing ------------------------------------------------------------------------------

    def _write(self, plans: list[_Planned], touched: dict[str, None]) -> None:
        """git's ``write_out_results``: phase 0 removes, phase 1 creates, in patch order; the
        paths written go to ``touched`` as they are. An OSError (the file system refusing a path
        or running out of room) is _Refused naming the path, never a bare message."""
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
            raise _Refused(f"unable to write {excerpt(rel)}: {exc.strerror or 'failed'}") from None

    def _mark_written(self, rel: str) -> None:
        self._written.add(rel)
        while "/" in rel:
            rel = rel.rsplit("/", 1)[0]
            if rel in self._written_below:
                break
            self._written_below.add(rel)

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
                raise _Refused(f"'{rel}' is beyond a symbolic link or file") from None
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
                if _kind(mode) == MODE_LINK:
                    # git's symlink(buf, path): the target ends at the first NUL byte.
                    os.symlink(data.split(b"\0", 1)[0], name, dir_fd=fd)
                    return
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
                # the umask applies, as for git
                out = os.open(name, flags, 0o777 if mode & 0o100 else 0o666, dir_fd=fd)
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
        except nofollow.NotInTree:  # only reachable if the tree changed under us
            raise _Refused(f"'{rel}' is beyond a symbolic link or file") from None


def _located(failures: list[HunkFailure], fps: Iterable[FilePatch]) -> tuple[HunkFailure, ...]:
    """Each failure with the line of the patch file it is about: the hunk's ``@@`` line, else the
    start of the file's section (what a CI annotation points at)."""
    from dataclasses import replace

    sections: dict[str, FilePatch] = {}
    for fp in fps:
        for name in (fp.new_path, fp.old_path):
            if name is not None:
                sections.setdefault(name, fp)
    out = []
    for f in failures:
        section = sections.get(f.file)
        if section is None:
            out.append(f)
            continue
        hunks = section.hunks
        line = hunks[f.hunk - 1].patch_line if 0 < f.hunk <= len(hunks) else section.patch_line
        out.append(replace(f, patch_line=line or None))
    return tuple(out)


def apply_patch_to_tree(root: Path, patch: PatchFile, provider: Provider | None = None) -> PatchResult:
    """Apply one parsed patch to the scratch directory ``root`` atomically (see module doc).

    For a sequence of patches with a ``provider``, use :func:`apply_stack` or one
    :class:`ScratchTree` so paths written by earlier patches are read back from ``root``.
    """
    return ScratchTree(root, provider).apply(patch)


def _exhausted(f: HunkFailure) -> bool:
    """The search budget ran out: trying the patch again, in reverse, would spend it again."""
    return f.reason == NOT_TRIED or f.reason.startswith("search budget exhausted")


Inspect = Callable[["ScratchTree", PatchFile], tuple[IndexDrift, ...]]


def apply_stack(
    root: Path,
    patches: Iterable[PatchFile],
    *,
    keep_going: bool = False,
    provider: Provider | None = None,
    inspect: Inspect | None = None,
) -> tuple[PatchResult, ...]:
    """Apply ``patches`` in order. Without ``keep_going`` the patches after the first failure
    are reported as ``skipped``, and a file's hunks after its first failed one are not tried.
    A patch found already in the tree is no reason to stop (the tree is as it would leave it).
    ``inspect(tree, patch)`` runs before each patch is applied; what it finds (the files whose
    ``index`` line names other content) goes into that patch's result."""
    tree = ScratchTree(root, provider, all_hunks=keep_going)
    results: list[PatchResult] = []
    failed = False
    for patch in patches:
        if failed and not keep_going:
            results.append(
                PatchResult(
                    name=patch.name,
                    ok=False,
                    skipped=True,
                    files=len(patch.files),
                    hunks=patch.hunk_count,
                    dep3=patch.dep3,
                )
            )
            continue
        drift = inspect(tree, patch) if inspect is not None else ()
        result = tree.apply(patch)
        if drift:
            result = replace(result, drift=drift)
        failed = failed or not (result.ok or result.reverse_applies)
        results.append(result)
    return tuple(results)
