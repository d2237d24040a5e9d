"""Re-making a patch's file sections: git's own diff and 3-way merge of one file, and the splice
that puts new hunks into a patch file while every other byte (its header, the sections that did
not change, a format-patch signature) stays as it was.

git runs in a scratch folder we own (no repository there, and ``vimesync.git`` disarms whatever
configuration could run a command), on files we wrote: ``git diff --no-index`` for hunks,
``git merge-file`` for the merge, as a maintainer would by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vimesync import git
from vimesync.errors import GitError
from vimesync.patches.model import FilePatch, Hunk, PatchFile

DIFF_CONTEXT = 3
# git's diff and merge of one file: beyond this (a generated or minified file) the work is not
# bounded well enough for a gate, and no maintainer resolves such a file by hand anyway.
MAX_MERGE_BYTES = 8 << 20


class TooBig(GitError):
    """A file over MAX_MERGE_BYTES: not diffed or merged (the patch is left as it is)."""


def _bounded(*datas: bytes) -> None:
    if any(len(d) > MAX_MERGE_BYTES for d in datas):
        raise TooBig(f"a file over {MAX_MERGE_BYTES >> 20} MiB is not diffed or merged")


class Scratch:
    """A folder for one-off files handed to git (numbered, so no name from a patch is used)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._n = 0
        # An empty repository of our own: git then inspects its (empty) config once, not before
        # every command as it does for a folder outside any repository.
        git.run(root, ["init", "-q", "--template="])

    def file(self, data: bytes) -> str:
        self._n += 1
        name = f"f{self._n}"
        (self.root / name).write_bytes(data)
        return name


def diff_hunks(scratch: Scratch, old: bytes, new: bytes, *, context: int = DIFF_CONTEXT) -> bytes:
    """The ``@@`` hunks (from the first ``@@`` line on) that turn ``old`` into ``new``; b"" when
    they are equal."""
    if old == new:
        return b""
    _bounded(old, new)
    a, b = scratch.file(old), scratch.file(new)
    args = ["diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", f"-U{context}", a, b]
    code, out, err = git.run_status(scratch.root, args)
    if code not in (0, 1):
        raise GitError(f"git diff failed: {err.decode('utf-8', 'replace')[:200]}")
    at = out.find(b"\n@@ ")
    if at < 0:  # binary, or a change git cannot show as text
        raise GitError("git diff gave no text hunks")
    return out[at + 1 :]


@dataclass(frozen=True)
class Merged:
    data: bytes  # the merged file, with conflict markers when ``conflicts``
    conflicts: int


def merge3(
    scratch: Scratch, *, base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str, str]
) -> Merged:
    """``git merge-file -p --diff3 ours base theirs``: the patch's change (base -> theirs) carried
    onto ``ours``; ``labels`` name ours, base and theirs in the conflict markers. A conflict shows
    the base section too (``|||||||``), what the maintainer needs to redo the patch's change."""
    _bounded(base, ours, theirs)
    o, b, t = scratch.file(ours), scratch.file(base), scratch.file(theirs)
    args = ["merge-file", "-p", "--diff3", "-L", labels[0], "-L", labels[1], "-L", labels[2], o, b, t]
    code, out, err = git.run_status(scratch.root, args)
    if code < 0 or code > 127:
        raise GitError(f"git merge-file failed: {err.decode('utf-8', 'replace')[:200]}")
    return Merged(out, code)


# ---------------------------------------------------------------------------------------------
# Splicing new hunks into a patch file


_INDEX = re.compile(rb"^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)((?: [0-7]+)?)(\r?\n)$")


@dataclass(frozen=True)
class NewSection:
    """What replaces one file section's hunks: ``hunks`` (git diff's ``@@`` part), and the blob ids
    of the file before and after (for the ``index`` line, abbreviated as the patch had them)."""

    hunks: bytes
    old_oid: str
    new_oid: str


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True)


def _hunk_end(lines: list[bytes], hunk: Hunk) -> int:
    """The 0-based index of the first line after ``hunk``'s body (its ``\\`` markers included)."""
    i = hunk.patch_line  # the line after the "@@" header (patch_line is 1-based)
    old, new = hunk.old_count, hunk.new_count
    while i < len(lines) and (old > 0 or new > 0):
        tag = lines[i][:1]
        if tag == b"\\":
            i += 1
            continue
        if tag in (b" ", b"\n", b"\r"):  # "\n": an empty context line some tools write
            old, new = old - 1, new - 1
        elif tag == b"-":
            old -= 1
        elif tag == b"+":
            new -= 1
        else:
            break
        i += 1
    while i < len(lines) and lines[i].startswith(b"\\"):
        i += 1
    return i


def section_spans(raw: bytes, patch: PatchFile) -> list[tuple[int, int, int]]:
    """Per file section: (first line, first hunk line, end) as 0-based line indexes into ``raw``.
    A section without hunks has first hunk line == end."""
    lines = _lines(raw)
    spans = []
    starts = [fp.patch_line - 1 for fp in patch.files]
    for k, fp in enumerate(patch.files):
        start = starts[k]
        nxt = starts[k + 1] if k + 1 < len(starts) else len(lines)
        if fp.hunks:
            first = fp.hunks[0].patch_line - 1
            end = _hunk_end(lines, fp.hunks[-1])
        else:
            first = end = nxt
        spans.append((start, first, end))
    return spans


def splice(raw: bytes, patch: PatchFile, sections: dict[int, NewSection | None]) -> bytes:
    """``raw`` with the hunks of the sections named (by index) replaced; ``None`` removes a
    section (the file needs no change any more). Everything else is kept byte for byte."""
    lines = _lines(raw)
    spans = section_spans(raw, patch)
    out: list[bytes] = []
    pos = 0
    for k, (start, first, end) in enumerate(spans):
        if k not in sections:
            continue
        out += lines[pos:start]
        new = sections[k]
        if new is not None:
            out += [_reindex(line, new) for line in lines[start:first]]
            out.append(new.hunks)
        pos = end
    out += lines[pos:]
    return b"".join(out)


def _reindex(line: bytes, new: NewSection) -> bytes:
    m = _INDEX.match(line)
    if m is None:
        return line
    a, b = m.group(1), m.group(2)
    return b"index %s..%s%s%s" % (
        new.old_oid[: len(a)].encode(),
        new.new_oid[: len(b)].encode(),
        m.group(3),
        m.group(4),
    )


def plain_modification(fp: FilePatch) -> bool:
    """A text change to one existing file (no creation, deletion, rename, copy, mode or binary):
    what a 3-way merge of file contents can carry."""
    return (
        fp.old_path is not None
        and fp.old_path == fp.new_path
        and not (fp.is_rename or fp.is_copy or fp.new_if_missing)
        and fp.binary is None
        and not fp.binary_without_data
        and (fp.new_mode is None or fp.old_mode == fp.new_mode)
        and bool(fp.hunks)
    )
