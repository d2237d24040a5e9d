"""bytes -> PatchFile: a strict, byte-exact parser of what ``git apply`` accepts.

The control flow mirrors git's apply.c (``find_header``, ``parse_git_diff_header``,
``parse_fragment``, ``parse_binary``) so that every file section, name, mode and hunk line
is what git would use. Where git silently skips or guesses, we refuse instead, because the
patches are untrusted and a silent skip means a stack that "applies" without doing what its
author wrote: extra lines after a hunk's counts, combined/context/normal/ed-style diffs hidden
between sections, absurd sizes. Name extraction lives in ``diffnames`` and path checks in
``safety``. Nothing here runs a program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vimesync.errors import PatchError
from vimesync.patches import diffnames as dn
from vimesync.patches.dep3 import parse_dep3
from vimesync.patches.diffbinary import parse_binary
from vimesync.patches.diffforeign import refuse_foreign
from vimesync.patches.model import FilePatch, Hunk, PatchFile
from vimesync.patches.safety import check_path

MAX_PATCH_BYTES = 64 * 1024 * 1024
MAX_LINE_NUMBER = 10_000_000  # hunk positions and counts
MAX_HUNKS_PER_FILE = 100_000

_NUM = re.compile(rb"\d+")


@dataclass
class _Section:
    """git's ``struct patch`` while a file header is being read (is_new/is_delete: -1 = unknown)."""

    line: int  # 0-based index of the section's first line
    traditional: bool
    is_new: int = 0
    is_delete: int = 0
    is_rename: bool = False
    is_copy: bool = False
    old_name: bytes | None = None
    new_name: bytes | None = None
    def_name: bytes | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    old_oid: str | None = None
    new_oid: str | None = None
    score: int | None = None
    dissimilarity: int | None = None
    extension_line: int = 0


def parse_patch(data: bytes, *, name: str, strip: int = 1, max_bytes: int = MAX_PATCH_BYTES) -> PatchFile:
    """Parse one patch file the way ``git apply -p<strip>`` reads it.

    Accepts git diffs (extended headers, renames, copies, modes, binary patches), plain unified
    diffs and ``git format-patch`` mails. The free text before the first file section is kept
    verbatim as ``header`` and parsed as DEP-3. Raises PatchError (naming the patch, the patch
    line and the file) for anything git would reject, for unsafe paths, and for input git would
    partly ignore (see the module docstring)."""
    if strip < 0:
        raise PatchError(name, f"invalid strip level -p{strip}")
    if len(data) > max_bytes:
        raise PatchError(name, f"patch is {len(data)} bytes, over the {max_bytes}-byte limit")
    return _Parser(data, name, strip).parse()


class _Parser:
    def __init__(self, data: bytes, name: str, strip: int) -> None:
        self.data = data
        self.name = name
        self.p = strip
        parts = data.split(b"\n")
        self.lines = [part + b"\n" for part in parts[:-1]]
        if parts[-1]:
            self.lines.append(parts[-1])  # last line without a newline
        self.n = len(self.lines)
        # remaining[i]: bytes from the start of line i to the end (git's "size")
        self.remaining = [0] * (self.n + 1)
        acc = 0
        for i in range(self.n - 1, -1, -1):
            acc += len(self.lines[i])
            self.remaining[i] = acc

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

    def _find_header(self, i: int) -> tuple[_Section, int] | None:
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
                sec, end = self._git_header(j)
                if end == j + 1:
                    continue  # a bare "diff --git" line: git skips it
                return sec, end
            if line.startswith(b"--- ") and j + 2 < self.n and lines[j + 1].startswith(b"+++ "):
                if lines[j + 2].startswith(b"@@ -") and self.remaining[j] >= len(lines[j + 1]) + 14:
                    return self._traditional_header(j), j + 2
        return None

    # -- file headers ---------------------------------------------------------------------

    def _git_header(self, j: int) -> tuple[_Section, int]:
        sec = _Section(line=j, traditional=False)
        sec.def_name = dn.git_header_name(self.p, self.lines[j])
        k = j + 1
        while k < self.n:
            line = self.lines[k]
            if not line.endswith(b"\n"):
                break
            if line.startswith(b"@@ -") or not self._git_header_line(sec, line, k):
                break
            extensions = sum([sec.is_delete == 1, sec.is_new == 1, sec.is_rename, sec.is_copy])
            if extensions > 1:
                raise self.error(
                    f"inconsistent header lines {sec.extension_line + 1} and {k + 1}", line=k + 1
                )
            if extensions and not sec.extension_line:
                sec.extension_line = k
            k += 1
        if sec.old_name is None and sec.new_name is None:
            if sec.def_name is None:
                raise self.error(
                    f"git diff header lacks filename information when removing {self.p} leading "
                    "pathname component(s)",
                    line=j + 1,
                )
            sec.old_name = sec.new_name = sec.def_name
        if (sec.new_name is None and not sec.is_delete) or (sec.old_name is None and not sec.is_new):
            raise self.error("git diff header lacks filename information", line=k + 1)
        return sec, k

    def _git_header_line(self, sec: _Section, line: bytes, k: int) -> bool:
        """Apply one extended header line to ``sec``; False when it is not a header line."""
        p1 = self.p - 1 if self.p else 0
        if line.startswith(b"--- "):
            sec.old_name = self._verify_name(sec, line[4:], sec.is_new == 1, sec.old_name, "old", k)
        elif line.startswith(b"+++ "):
            sec.new_name = self._verify_name(sec, line[4:], sec.is_delete == 1, sec.new_name, "new", k)
        elif line.startswith(b"old mode "):
            sec.old_mode = self._mode(line[9:], k)
        elif line.startswith(b"new mode "):
            sec.new_mode = self._mode(line[9:], k)
        elif line.startswith(b"deleted file mode "):
            sec.is_delete = 1
            sec.old_name = sec.def_name
            sec.old_mode = self._mode(line[18:], k)
        elif line.startswith(b"new file mode "):
            sec.is_new = 1
            sec.new_name = sec.def_name
            sec.new_mode = self._mode(line[14:], k)
        elif line.startswith((b"copy from ", b"copy to ")):
            sec.is_copy = True
            if line.startswith(b"copy from "):
                sec.old_name = dn.find_name(line[10:], None, p1, 0)
            else:
                sec.new_name = dn.find_name(line[8:], None, p1, 0)
        elif line.startswith((b"rename old ", b"rename from ")):
            sec.is_rename = True
            sec.old_name = dn.find_name(line[11 if line[7:8] == b"o" else 12 :], None, p1, 0)
        elif line.startswith((b"rename new ", b"rename to ")):
            sec.is_rename = True
            sec.new_name = dn.find_name(line[11 if line[7:8] == b"n" else 10 :], None, p1, 0)
        elif line.startswith(b"similarity index "):
            sec.score = _percent(line[17:])
        elif line.startswith(b"dissimilarity index "):
            sec.dissimilarity = _percent(line[20:])
        elif line.startswith(b"index "):
            self._index_line(sec, line[6:], k)
        else:
            return False
        return True

    def _verify_name(
        self, sec: _Section, rest: bytes, isnull: bool, name: bytes | None, side: str, k: int
    ) -> bytes | None:
        """git's gitdiff_verify_name: ---/+++ must agree with what the header already said."""
        if name is None and not isnull:
            return dn.find_name(rest, None, self.p, dn.TERM_TAB)
        if name is not None:
            if isnull:
                raise self.error(f"bad git diff: expected /dev/null on the {side} side", line=k + 1)
            another = dn.find_name(rest, None, self.p, dn.TERM_TAB)
            if another != name:
                raise self.error(f"bad git diff: inconsistent {side} filename", line=k + 1)
            return name
        if not dn.is_dev_null(rest):
            raise self.error("bad git diff: expected /dev/null", line=k + 1)
        return None

    def _mode(self, rest: bytes, k: int) -> int:
        m = re.match(rb"[0-7]+", rest)
        if not m or m.end() >= len(rest) or rest[m.end()] not in dn.SPACE or len(m.group()) > 7:
            shown = rest.strip().decode("utf-8", "backslashreplace")
            raise self.error(f"invalid mode {shown!r}", line=k + 1)
        mode = int(m.group(), 8)
        if mode > 0o177777:
            raise self.error(f"invalid mode {m.group().decode()}", line=k + 1)
        return mode

    def _index_line(self, sec: _Section, rest: bytes, k: int) -> None:
        # "index <hex>..<hex>[ <mode>]"; git ignores a malformed one, and so do we.
        dots = rest.find(b".")
        if dots < 0 or rest[dots + 1 : dots + 2] != b"." or dots > 64:
            return
        old = rest[:dots]
        tail = rest[dots + 2 :]
        eol = tail.find(b"\n")
        sp = tail.find(b" ")
        end = eol if sp < 0 or eol < sp else sp
        if end > 64:
            return
        sec.old_oid = old.decode("ascii", "replace")
        sec.new_oid = tail[:end].decode("ascii", "replace")
        if tail[end : end + 1] == b" ":
            sec.old_mode = self._mode(tail[end + 1 :], k)

    def _traditional_header(self, j: int) -> _Section:
        """git's parse_traditional_patch, with the strip level known (no guessing)."""
        sec = _Section(line=j, traditional=True, is_new=-1, is_delete=-1)
        first, second = self.lines[j][4:], self.lines[j + 1][4:]
        if dn.is_dev_null(first):
            sec.is_new, sec.is_delete = 1, 0
            name = sec.new_name = dn.find_name_traditional(second, None, self.p)
        elif dn.is_dev_null(second):
            sec.is_new, sec.is_delete = 0, 1
            name = sec.old_name = dn.find_name_traditional(first, None, self.p)
        else:
            first_name = dn.find_name_traditional(first, None, self.p)
            name = dn.find_name_traditional(second, first_name, self.p)
            if dn.has_epoch_timestamp(first):
                sec.is_new, sec.is_delete = 1, 0
                sec.new_name = name
            elif dn.has_epoch_timestamp(second):
                sec.is_new, sec.is_delete = 0, 1
                sec.old_name = name
            else:
                sec.old_name = sec.new_name = name
        if name is None:
            raise self.error("unable to find filename in patch", line=j + 1)
        return sec

    # -- hunks ----------------------------------------------------------------------------

    def _parse_section(self, sec: _Section, k: int) -> tuple[FilePatch, int]:
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
                binary, k = parse_binary(self.lines, k + 1, self.error, label)
            elif line.endswith(b" differ\n") and line.startswith((b"Binary files ", b"Files ")):
                without_data = True
                k += 1
            elif not self._metadata_changes(sec):
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
        )
        return fp, k

    def _path(self, raw: bytes | None, j: int) -> str | None:
        return None if raw is None else check_path(raw, patch=self.name, line=j + 1)

    @staticmethod
    def _metadata_changes(sec: _Section) -> bool:
        return bool(
            sec.is_rename
            or sec.is_copy
            or sec.is_new > 0
            or sec.is_delete
            or (sec.old_mode and sec.new_mode and sec.old_mode != sec.new_mode)
        )

    def _parse_hunk(self, k: int, index: int, label: str) -> tuple[Hunk, int]:
        """git's parse_fragment, then the line contents as apply_one_fragment reads them."""
        head = self.lines[k]
        rng = _fragment_header(head)
        if rng is None:
            raise self.error("corrupt patch: malformed @@ hunk header", line=k + 1, file=label, hunk=index)
        if max(rng) > MAX_LINE_NUMBER:
            raise self.error(
                f"absurd hunk header (numbers over {MAX_LINE_NUMBER})", line=k + 1, file=label, hunk=index
            )
        old_start, old_count, new_start, new_count = rng
        old, new = old_count, new_count
        added = deleted = 0
        m = k + 1
        lines = self.lines
        while m < self.n and (old or new):
            line = lines[m]
            if not line.endswith(b"\n"):
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
            elif c == 0x2D:
                old -= 1
                deleted += 1
            elif c == 0x2B:
                new -= 1
                added += 1
            elif c == 0x5C:
                if len(line) < 12 or not line.startswith(b"\\ "):
                    raise self.error("corrupt patch: malformed '\\' line", line=m + 1, file=label, hunk=index)
            else:
                raise self._count_error(m, k, old, new, label, index)
            if old < 0 or new < 0:
                raise self._count_error(m, k, old, new, label, index)
            m += 1
        if old or new:
            raise self._count_error(m, k, old, new, label, index)
        if not added and not deleted:
            raise self.error(
                "corrupt patch: hunk adds and removes nothing", line=k + 1, file=label, hunk=index
            )
        if m < self.n and self.remaining[m] > 12 and lines[m].startswith(b"\\ "):
            m += 1  # "\ No newline at end of file" after the last counted line
        body: list[tuple[str, bytes]] = []
        for idx in range(k + 1, m):
            line = lines[idx]
            c = line[0]
            if c == 0x5C:
                continue
            plen = len(line) - 1
            if idx + 1 < m and lines[idx + 1][0] == 0x5C:
                plen -= 1  # "\ No newline at end of file": this line has no terminator
            if c == 0x0A:  # an empty context line (newer GNU diff)
                if plen >= 0:
                    body.append((" ", b"\n"))
            else:
                body.append((chr(c), line[1 : 1 + plen]))
        header = head.rstrip(b"\r\n").decode("utf-8", "replace")
        return Hunk(old_start, old_count, new_start, new_count, header, tuple(body), k + 1), m

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


def _parse_range(line: bytes, offset: int, expect: bytes) -> tuple[int, int, int] | None:
    if offset < 0 or offset >= len(line):
        return None
    m = _NUM.match(line, offset)
    if not m:
        return None
    first = _num(m.group())
    offset = m.end()
    count = 1
    if line[offset : offset + 1] == b",":
        m = _NUM.match(line, offset + 1)
        if not m:
            return None
        count = _num(m.group())
        offset = m.end()
    if line[offset : offset + len(expect)] != expect:
        return None
    return first, count, offset + len(expect)


def _num(digits: bytes) -> int:
    # Never convert an unbounded digit string: anything this long is over every cap anyway.
    return int(digits) if len(digits) <= 12 else 10**12


def _fragment_header(line: bytes) -> tuple[int, int, int, int] | None:
    """git's parse_fragment_header: ``@@ -a[,b] +c[,d] @@`` -> (a, b, c, d)."""
    if not line.endswith(b"\n"):
        return None
    old = _parse_range(line, 4, b" +")
    if old is None:
        return None
    new = _parse_range(line, old[2], b" @@")
    if new is None:
        return None
    return old[0], old[1], new[0], new[1]


def _percent(rest: bytes) -> int | None:
    m = _NUM.match(rest)
    if not m:
        return 0
    value = _num(m.group())
    return value if value <= 100 else None
