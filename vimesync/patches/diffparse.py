"""bytes -> PatchFile: a strict, byte-exact parser of what ``git apply`` accepts.

The control flow mirrors git's apply.c (``find_header``, ``parse_git_diff_header``,
``parse_fragment``, ``parse_binary``) so that every file section, name, mode and hunk line
is what git would use. Where git silently skips or guesses, we refuse instead, because the
patches are untrusted and a silent skip means a stack that "applies" without doing what its
author wrote: extra lines after a hunk's counts, combined/context/normal/ed-style diffs hidden
between sections, absurd sizes. Section headers are read by ``diffheader`` (names by
``diffnames``), binary hunks by ``diffbinary``, foreign formats recognized by ``diffforeign``,
and every path is checked by ``safety``. Nothing here runs a program.

Deliberate differences from git (each refuses input git would take):
- a hunk line after the hunk's counts are met: git ignores it, silently dropping a change;
- combined/context/normal/ed diffs between or after sections: git skips them as garbage;
- paths git would normalize or accept (``a//b``, backslashes, control characters, NTFS/HFS
  aliases of ``.git``) and numbers over the caps below.
Everything else (names, -pN, timestamps, "\\ No newline", binary hunks) follows apply.c.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate

from vimesync.errors import PatchError
from vimesync.patches.dep3 import parse_dep3
from vimesync.patches.diffbinary import MAX_BINARY_HELD, held_size, parse_binary
from vimesync.patches.diffforeign import refuse_foreign
from vimesync.patches.diffheader import HeaderReader, Section
from vimesync.patches.model import MAX_PATCH_BYTES, FilePatch, Hunk, HunkLines, PatchFile
from vimesync.patches.safety import check_path

MAX_LINE_NUMBER = 10_000_000  # hunk positions and counts
MAX_HUNKS_PER_FILE = 100_000
# Every line of a patch costs ~100-250 bytes while parsed (a bytes object per line, its offset,
# its hunk entry): 1M lines peak at ~300 MB, and are 20-100 times what a real engine patch has.
MAX_PATCH_LINES = 1_000_000


def parse_patch(
    data: bytes,
    *,
    name: str,
    strip: int = 1,
    max_bytes: int = MAX_PATCH_BYTES,
    series_binary: tuple[int, int] | None = None,
    series_files: tuple[int, int] | None = None,
) -> PatchFile:
    """Parse one patch file the way ``git apply -p<strip>`` reads it.

    Accepts git diffs (extended headers, renames, copies, modes, binary patches), plain unified
    diffs and ``git format-patch`` mails. The free text before the first file section is kept
    verbatim as ``header`` and parsed as DEP-3. Raises PatchError (naming the patch, the patch
    line and the file) for anything git would reject, for unsafe paths, and for input git would
    partly ignore (see the module docstring).

    ``series_binary`` is (binary data the patches before this one hold, the series' cap): the
    patch is refused at the binary hunk that takes the sum over the cap, before more of its
    data is inflated (see ``diffbinary.held_size``). ``series_files`` likewise caps the file
    sections of the series (each costs a few hundred microseconds to check and write)."""
    if strip < 0:
        raise PatchError(name, f"invalid strip level -p{strip}")
    if len(data) > max_bytes:
        raise PatchError(name, f"patch is {len(data)} bytes, over the {max_bytes}-byte limit")
    if data.count(b"\n") > MAX_PATCH_LINES:  # counted before any line is split off
        raise PatchError(name, f"patch has more than {MAX_PATCH_LINES} lines")
    parser = _Parser(data, name, strip, series_binary or (0, -1), series_files or (0, -1))
    try:
        return parser.parse()
    finally:
        # The header reader holds the parser's bound method: without this the cycle kept every
        # line of the patch alive until the garbage collector ran.
        del parser.headers


class _Parser:
    def __init__(
        self,
        data: bytes,
        name: str,
        strip: int,
        series_binary: tuple[int, int],
        series_files: tuple[int, int],
    ) -> None:
        self.data = data
        self.name = name
        parts = data.split(b"\n")
        self.lines = [part + b"\n" for part in parts[:-1]]
        if parts[-1]:
            self.lines.append(parts[-1])  # last line without a newline
        self.n = len(self.lines)
        # remaining[i]: bytes from the start of line i to the end (git's "size"); an array, not a
        # list of ints: 8 bytes a line instead of ~36
        total = len(data)
        self.remaining = array("Q", (total - done for done in accumulate(map(len, self.lines), initial=0)))
        self.headers = HeaderReader(self.lines, strip, self.error)
        self.binary_held = 0  # bytes the binary hunks so far hold, with their results
        self.series_held, self.series_cap = series_binary  # cap -1: no series
        self.series_files, self.series_files_cap = series_files

    def error(
        self, message: str, *, line: int | None = None, file: str | None = None, hunk: int | None = None
    ) -> PatchError:
        return PatchError(self.name, message, line=line, file=file, hunk=hunk)

    # -- driver ---------------------------------------------------------------------------

    def parse(self) -> PatchFile:
        files: list[FilePatch] = []
        first_section: int | None = None
        i = prev_end = 0
        while i < self.n:
            found = self._find_header(i)
            if found is None:
                break
            sec, body = found
            if 0 <= self.series_files_cap <= self.series_files + len(files):
                why = f"the series' patches change more than {self.series_files_cap} files"
                raise self.error(why, line=sec.line + 1)
            if first_section is None:
                first_section = sec.line
            else:
                refuse_foreign(self.lines, prev_end, sec.line, self.error, header=False)
            fp, i = self._parse_section(sec, body)
            files.append(fp)
            prev_end = i
        if first_section is None:
            refuse_foreign(self.lines, 0, self.n, self.error, header=False, whole=True)
            raise AssertionError("unreachable")  # refuse_foreign(whole=True) always raises
        refuse_foreign(self.lines, 0, first_section, self.error, header=True)
        refuse_foreign(self.lines, prev_end, self.n, self.error, header=False)
        header = self.data[: len(self.data) - self.remaining[first_section]]
        return PatchFile(name=self.name, header=header, files=tuple(files), dep3=parse_dep3(header))

    def _find_header(self, i: int) -> tuple[Section, int] | None:
        """git's find_header: the next file section at or after line ``i``, or None."""
        lines = self.lines
        for j in range(i, self.n):
            line = lines[j]
            if len(line) < 6:
                continue
            if line.startswith(b"@@ -") and _fragment_header(line) is not None:
                raise self.error("hunk without a file header (patch fragment without header)", line=j + 1)
            if self.remaining[j] < len(line) + 6:
                return None
            if line.startswith(b"diff --git "):
                sec, end = self.headers.git_header(j)
                if end == j + 1:
                    continue  # a bare "diff --git" line: git skips it
                return sec, end
            if line.startswith(b"--- ") and j + 2 < self.n and lines[j + 1].startswith(b"+++ "):
                if lines[j + 2].startswith(b"@@ -") and self.remaining[j] >= len(lines[j + 1]) + 14:
                    return self.headers.traditional_header(j), j + 2
        return None

    def _parse_section(self, sec: Section, k: int) -> tuple[FilePatch, int]:
        body = k
        old_path = self._path(sec.old_name, sec.line)
        new_path = self._path(sec.new_name, sec.line)
        label = new_path or old_path or "?"
        hunks: list[Hunk] = []
        oldlines = newlines = 0
        while k < self.n and self.remaining[k] > 4 and self.lines[k].startswith(b"@@ -"):
            if len(hunks) >= MAX_HUNKS_PER_FILE:
                raise self.error(f"more than {MAX_HUNKS_PER_FILE} hunks in one file", line=k + 1, file=label)
            hunk, k = self._parse_hunk(k, len(hunks) + 1, label)
            hunks.append(hunk)
            oldlines += hunk.old_count
            newlines += hunk.new_count
        if hunks:
            self._refuse_overcount(k, hunks[-1], len(hunks), label)
        if sec.is_new < 0 and (oldlines or len(hunks) > 1):
            sec.is_new = 0
        if sec.is_delete < 0 and (newlines or len(hunks) > 1):
            sec.is_delete = 0
        if sec.is_new > 0 and oldlines:
            raise self.error("new file depends on old contents", line=sec.line + 1, file=label)
        if sec.is_delete > 0 and newlines:
            raise self.error("deleted file still has contents", line=sec.line + 1, file=label)

        binary = None
        without_data = False
        if not hunks:
            line = self.lines[k] if k < self.n else b""
            if line == b"GIT binary patch\n":
                at = k + 1
                binary, k = parse_binary(self.lines, k + 1, self.error, label)
                self.binary_held += held_size(binary)
                if self.binary_held > MAX_BINARY_HELD:
                    why = f"the patch's binary data and results come to over {MAX_BINARY_HELD >> 20} MiB"
                    raise self.error(why, line=at, file=label)
                if 0 <= self.series_cap < self.series_held + self.binary_held:
                    why = f"the series' binary data comes to over {self.series_cap >> 20} MiB"
                    raise self.error(why, line=at, file=label)
            elif line.endswith(b" differ\n") and line.startswith((b"Binary files ", b"Files ")):
                without_data = True
                k += 1
            elif not sec.metadata_changes:
                raise self.error(
                    "file section with no hunks and no mode, rename, copy, create or delete change "
                    "(patch with only garbage)",
                    line=k + 1,
                    file=label,
                )
        fp = FilePatch(
            old_path=None if sec.is_new > 0 else old_path,
            new_path=None if sec.is_delete > 0 else new_path,
            old_mode=sec.old_mode,
            new_mode=sec.new_mode,
            old_oid=sec.old_oid,
            new_oid=sec.new_oid,
            is_rename=sec.is_rename,
            is_copy=sec.is_copy,
            similarity=sec.score,
            hunks=tuple(hunks),
            binary=binary,
            binary_without_data=without_data,
            patch_line=sec.line + 1,
            dissimilarity=sec.dissimilarity,
            new_if_missing=sec.is_new < 0,
            crlf_header=bool(hunks) and _crlf_header(self.lines, sec.line, body),
        )
        return fp, k

    def _path(self, raw: bytes | None, j: int) -> str | None:
        return None if raw is None else check_path(raw, patch=self.name, line=j + 1)

    def _parse_hunk(self, k: int, index: int, label: str) -> tuple[Hunk, int]:
        """git's parse_fragment, reading each line's content as apply_one_fragment does."""
        head = self.lines[k]
        old_start, old_count, new_start, new_count = self._hunk_range(head, k, index, label)
        old, new = old_count, new_count
        added = deleted = 0
        lines, n, remaining = self.lines, self.n, self.remaining
        # the hunk's lines, stored compactly (model.HunkLines): tags, contents, end offsets
        tags: list[str] = []
        body = bytearray()
        ends = array("I")
        m = k + 1
        while m < n and (old or new):
            line = lines[m]
            if line[-1] != 0x0A:
                raise self.error(
                    "corrupt patch: hunk line without a newline at end of patch file",
                    line=m + 1,
                    file=label,
                    hunk=index,
                )
            c = line[0]
            if c == 0x20 or c == 0x0A:
                old -= 1
                new -= 1
                tag = " "
            elif c == 0x2D:
                old -= 1
                deleted += 1
                tag = "-"
            elif c == 0x2B:
                new -= 1
                added += 1
                tag = "+"
            elif c == 0x5C:
                if len(line) < 12 or not line.startswith(b"\\ "):
                    raise self.error("corrupt patch: malformed '\\' line", line=m + 1, file=label, hunk=index)
                m += 1
                continue
            else:
                raise self._count_error(m, k, old, new, label, index)
            if old < 0 or new < 0:
                raise self._count_error(m, k, old, new, label, index)
            # A following "\ No newline at end of file" (inside the hunk, or the one git reads
            # after the last counted line) means this line has no terminator.
            nxt = lines[m + 1] if m + 1 < n else b""
            no_eol = nxt[:1] == b"\\" and (old or new or (remaining[m + 1] > 12 and nxt[:2] == b"\\ "))
            if c == 0x0A:  # an empty context line (newer GNU diff)
                if not no_eol:
                    tags.append(" ")
                    body += b"\n"
                    ends.append(len(body))
            else:
                tags.append(tag)
                body += line[1:-1] if no_eol else line[1:]
                ends.append(len(body))
            m += 1
        if old or new:
            raise self._count_error(m, k, old, new, label, index)
        if not added and not deleted:
            raise self.error(
                "corrupt patch: hunk adds and removes nothing", line=k + 1, file=label, hunk=index
            )
        if m < n and remaining[m] > 12 and lines[m].startswith(b"\\ "):
            m += 1  # "\ No newline at end of file" after the last counted line
        header = head.rstrip(b"\r\n").decode("utf-8", "replace")
        lines_ = HunkLines.from_parts("".join(tags), bytes(body), ends)
        return Hunk(old_start, old_count, new_start, new_count, header, lines_, k + 1), m

    def _hunk_range(self, head: bytes, k: int, index: int, label: str) -> tuple[int, int, int, int]:
        """The numbers of the ``@@`` line ``head`` (line ``k``), within the caps."""
        rng = _fragment_header(head)
        if rng is None:
            raise self.error("corrupt patch: malformed @@ hunk header", line=k + 1, file=label, hunk=index)
        if max(rng) > MAX_LINE_NUMBER:
            raise self.error(
                f"absurd hunk header (numbers over {MAX_LINE_NUMBER})", line=k + 1, file=label, hunk=index
            )
        return rng

    def _count_error(self, m: int, k: int, old: int, new: int, label: str, index: int) -> PatchError:
        if old < 0 or new < 0:
            side = "old" if old < 0 else "new"
            msg = f"corrupt patch: hunk has more {side} lines than its @@ header (line {k + 1}) announces"
        elif m >= self.n:
            msg = (
                f"truncated hunk: the patch ends while its @@ header (line {k + 1}) still expects "
                f"{old} old and {new} new line(s)"
            )
        else:
            msg = (
                f"corrupt patch: line {m + 1} is not a hunk line, but the @@ header (line {k + 1}) "
                f"still expects {old} old and {new} new line(s)"
            )
        return self.error(msg, line=min(m, self.n - 1) + 1, file=label, hunk=index)

    def _refuse_overcount(self, m: int, last: Hunk, index: int, label: str) -> None:
        # git stops reading a hunk when its counts are met and skips what follows as garbage, so
        # a hand-edited hunk with an extra line would silently lose it. Refuse lines that can only
        # be hunk lines; allow a "-- " mail signature, blank lines and a following ---/+++ pair.
        if m >= self.n:
            return
        line = self.lines[m]
        if line[:1] not in (b" ", b"+", b"-") or line in (b"-- \n", b"-- \r\n", b"--\n"):
            return
        if line.startswith(b"--- ") and m + 1 < self.n and self.lines[m + 1].startswith(b"+++ "):
            return
        raise self.error(
            f"corrupt patch: hunk has more lines than its @@ header (line {last.patch_line}) announces",
            line=m + 1,
            file=label,
            hunk=index,
        )


_HUNK_HEADER = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _crlf_header(lines: list[bytes], start: int, end: int) -> bool:
    """GNU patch's ``p_strip_trailing_cr`` for the section whose header is ``lines[start:end]``:
    whether the last of its ``---``, ``+++`` and ``Index:`` lines ends in CRLF."""
    for line in reversed(lines[start:end]):
        if line.startswith((b"--- ", b"+++ ", b"Index:")):
            return line.endswith(b"\r\n")
    return False


def _num(digits: bytes) -> int:
    # Never convert an unbounded digit string: anything this long is over every cap anyway.
    return int(digits) if len(digits) <= 12 else 10**12


def _fragment_header(line: bytes) -> tuple[int, int, int, int] | None:
    """git's parse_fragment_header: ``@@ -a[,b] +c[,d] @@`` -> (a, b, c, d); counts default to 1."""
    if not line.endswith(b"\n"):
        return None
    m = _HUNK_HEADER.match(line)
    if m is None:
        return None
    a, b, c, d = m.groups()
    return _num(a), 1 if b is None else _num(b), _num(c), 1 if d is None else _num(d)
