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

Lazy sources: a :class:`Provider` answers for paths not yet in the scratch directory (see
:mod:`vimesync.patches.scratchview`). The parts: ``scratchview`` (what a patch reads),
``scratchcheck`` (one patch checked in memory), ``scratchwrite`` (writing it); this module is
:class:`ScratchTree`, applying patches and stacks, and finding a failed patch already applied.

Where we differ from git, on purpose: a patch git would abort while writing (a file where a
directory must go, a non-empty directory where a file or symlink must go) fails here before
anything is written, where git leaves the files it wrote first; gitlink (submodule) entries are
refused; a symlink pointing outside the tree is never followed, not even to ask, as git's
``lstat`` of a new path would, whether the path beyond it loops (git's verdict there depends on
the machine's files; ours does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from vimesync.errors import PatchError
from vimesync.git import MODE_DIR, MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_LINK
from vimesync.patches.apply import NOT_TRIED
from vimesync.patches.model import ApplyMode, FilePatch, HunkFailure, IndexDrift, PatchFile, PatchResult
from vimesync.patches.reverse import reverse_patch
from vimesync.patches.scratchcheck import PatchCheck
from vimesync.patches.scratchview import Provider, Refused, directory_provider, read_entry
from vimesync.patches.scratchwrite import ScratchWrite

__all__ = [
    "MODE_DIR",
    "MODE_EXEC",
    "MODE_FILE",
    "MODE_GITLINK",
    "MODE_LINK",
    "Provider",
    "ScratchTree",
    "apply_patch_to_tree",
    "apply_stack",
    "directory_provider",
    "read_entry",
]


class ScratchTree(PatchCheck, ScratchWrite):
    """A scratch directory that patches are applied to, plus an optional lazy provider."""

    def apply(self, patch: PatchFile) -> PatchResult:
        """Apply ``patch`` (one ``git apply`` invocation): check all in memory, then write. When it
        fails, find out whether it is (partly) in the tree already (see :meth:`already_applied`)."""
        plans, offsets, failures = self._plan(patch, all_hunks=self.all_hunks)
        touched: dict[str, None] = {}
        already: tuple[tuple[str, int], ...] = ()
        reverse = False
        if failures and any(f.file for f in failures) and not any(_exhausted(f) for f in failures):
            already, reverse = self.already_applied(patch, failures)  # against the tree as it was
        # git apply writes a patch whole or not at all; GNU patch writes what applied of a failed
        # one (each file with the hunks that applied, the rest to .rej files), and so does its tree
        leaves = self.mode.applier == "gnu-patch" and not reverse
        self._components = {}  # the write phase changes directories
        if not failures or (leaves and plans):
            try:
                self._write(plans, touched)
            except Refused as exc:  # only reachable if the tree changed under us
                failures.append(HunkFailure(file="", hunk=0, header="", reason=str(exc)))
            for rel in touched:
                self.writers[rel] = patch.name
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
    mode: ApplyMode | None = None,
) -> tuple[PatchResult, ...]:
    """Apply ``patches`` in order. Without ``keep_going`` the patches after the first failure
    are reported as ``skipped``, and a file's hunks after its first failed one are not tried.
    A patch found already in the tree is no reason to stop (the tree is as it would leave it).
    ``inspect(tree, patch)`` runs before each patch is applied; what it finds (the files whose
    ``index`` line names other content) goes into that patch's result. ``mode`` says whose
    semantics apply each patch: git apply's (the default: a patch applies all or nothing) or GNU
    patch's (fuzz, --forward; a failed patch leaves what GNU leaves: the files whose hunks all
    applied, and the hunks that applied of the others)."""
    tree = ScratchTree(root, provider, all_hunks=keep_going, mode=mode)
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
