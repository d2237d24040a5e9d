"""Reading one file section's header the way git's apply.c does.

``parse_git_diff_header`` (``diff --git`` plus extended lines: modes, new/deleted file,
rename/copy from/to, similarity, index) and ``parse_traditional_patch`` (``---``/``+++``
pairs with optional timestamps). Names come from ``diffnames``; the caller validates them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vimesync.errors import PatchError
from vimesync.patches import diffnames as dn

_NUM = re.compile(rb"\d+")
_MODE = re.compile(rb"[ \t\v\f\r]*([0-7]+)")


@dataclass
class Section:
    """git's ``struct patch`` while a file header is being read (is_new/is_delete: -1 = unknown)."""

    line: int  # 0-based index of the section's first line
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

    @property
    def metadata_changes(self) -> bool:
        """git's metadata_changes: a section without hunks is only valid when this holds."""
        return bool(
            self.is_rename
            or self.is_copy
            or self.is_new > 0
            or self.is_delete
            or (self.old_mode and self.new_mode and self.old_mode != self.new_mode)
        )


class HeaderReader:
    """Reads section headers from ``lines`` at strip level ``strip``; ``error`` builds PatchErrors."""

    def __init__(self, lines: Sequence[bytes], strip: int, error: Callable[..., PatchError]) -> None:
        self.lines = lines
        self.n = len(lines)
        self.p = strip
        self.error = error

    def git_header(self, j: int) -> tuple[Section, int]:
        sec = Section(line=j)
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

    def _git_header_line(self, sec: Section, line: bytes, k: int) -> bool:
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
        self, sec: Section, rest: bytes, isnull: bool, name: bytes | None, side: str, k: int
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
        """git's parse_mode_line: octal digits (strtoul: leading blanks allowed), then whitespace."""
        m = _MODE.match(rest)
        if not m or m.end() >= len(rest) or rest[m.end()] not in dn.SPACE or len(m.group(1)) > 7:
            shown = rest.strip().decode("utf-8", "backslashreplace")
            raise self.error(f"invalid mode {shown!r}", line=k + 1)
        mode = int(m.group(1), 8)
        if mode > 0o177777:  # git would truncate it to an unsigned int; no real mode is this big
            raise self.error(f"invalid mode {m.group(1).decode()}", line=k + 1)
        return mode

    def _index_line(self, sec: Section, rest: bytes, k: int) -> None:
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

    def traditional_header(self, j: int) -> Section:
        """git's parse_traditional_patch, with the strip level known (no guessing)."""
        sec = Section(line=j, is_new=-1, is_delete=-1)
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


def _percent(rest: bytes) -> int | None:
    m = _NUM.match(rest)
    if not m:
        return 0
    digits = m.group()
    value = int(digits) if len(digits) <= 12 else 10**12
    return value if value <= 100 else None
