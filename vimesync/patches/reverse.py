"""A patch turned around, as ``git apply -R`` sees it: pre- and post-images swapped.

Checking the reversed patch against the tree the forward patch failed on answers "is this patch
already in the tree?" — GNU patch's "Reversed (or previously applied) patch detected", ``git apply
-R --check``. git's ``reverse_patches`` swaps the paths, modes, ids, hunk positions and the ``+``/``-``
lines, and nothing else (the search still starts at the new side's position, now the old one's).

A binary section cannot be turned around from its forward data alone (git needs the reverse hunk
a full binary diff carries, which the parser does not keep): it stays unappliable in reverse, so a
patch with binary files is never taken for already applied.
"""

from __future__ import annotations

from dataclasses import replace

from vimesync.patches.model import FilePatch, Hunk, HunkLines, PatchFile

_SWAP = str.maketrans("+-", "-+")


def reverse_hunk(hunk: Hunk) -> Hunk:
    """``hunk`` with its sides swapped (``-a,b +c,d`` becomes ``-c,d +a,b``)."""
    lines = hunk.lines
    assert isinstance(lines, HunkLines)
    swapped = HunkLines.from_parts(lines.tags.translate(_SWAP), lines._data, lines._ends)
    return Hunk(
        old_start=hunk.new_start,
        old_count=hunk.new_count,
        new_start=hunk.old_start,
        new_count=hunk.old_count,
        header=hunk.header,
        lines=swapped,
        patch_line=hunk.patch_line,
    )


def reverse_file(fp: FilePatch) -> FilePatch:
    """One file section reversed: a creation becomes a deletion, a rename goes back."""
    binary = fp.binary is not None or fp.binary_without_data
    return replace(
        fp,
        old_path=fp.new_path,
        new_path=fp.old_path,
        old_mode=fp.new_mode,
        new_mode=fp.old_mode,
        old_oid=fp.new_oid,
        new_oid=fp.old_oid,
        hunks=tuple(reverse_hunk(h) for h in fp.hunks),
        binary=None,
        binary_without_data=binary,
        # "@@ -0,0 +1,N @@" without /dev/null: git's reverse of it must remove the whole file
        new_if_missing=False,
    )


def reverse_patch(patch: PatchFile) -> PatchFile:
    """The whole patch reversed (its sections in the same order, as ``git apply -R`` keeps them)."""
    return replace(patch, files=tuple(reverse_file(fp) for fp in patch.files))
