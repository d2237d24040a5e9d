"""Recognizing diff formats ``git apply`` does not take, so we can refuse them by name.

git skips any text it does not recognize between file sections, so a combined diff
(``diff --cc``), a context diff (``***``), a normal diff (``3c3`` / ``< x`` / ``> y``) or an
ed script hidden in a patch file would be silently ignored. For untrusted patches we refuse
them instead, naming the line. Free text before the first section (commit messages, DEP-3
headers) is only checked for the unambiguous markers, since prose may contain anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from vimesync.errors import PatchError

_CONTEXT_HUNK = re.compile(rb"\*\*\* \d+(,\d+)? \*\*\*\*\r?\n")
_NORMAL = re.compile(rb"\d+(,\d+)?[acd]\d+(,\d+)?\r?\n")
_ED = re.compile(rb"\d+(,\d+)?([acdi])\r?\n")
_RCS = re.compile(rb"[ad]\d+ \d+\r?\n")


def _kind(lines: Sequence[bytes], i: int, end: int, *, header: bool, whole: bool) -> str | None:
    """The foreign diff format that line ``i`` starts, if any."""
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < end else b""
    if line.startswith((b"diff --cc ", b"diff --combined ", b"@@@ ")):
        return "combined diff (diff --cc / @@@), which git apply does not take"
    if line.rstrip(b"\r\n") == b"*" * 15 and _CONTEXT_HUNK.fullmatch(nxt):
        return "context diff (*** / ---), not a unified diff"
    if header:
        return None
    if _NORMAL.fullmatch(line) and nxt.startswith((b"< ", b"> ")):
        return "normal-format diff (3c3, < old, > new), not a unified diff"
    m = _ED.fullmatch(line)
    if m:
        if whole:
            return "ed-style diff (diff -e), not a unified diff"
        if m.group(2) == b"d" and (_ED.fullmatch(nxt) or i + 1 >= end):
            return "ed-style diff (diff -e), not a unified diff"
        if m.group(2) != b"d" and any(lines[j] in (b".\n", b".\r\n") for j in range(i + 1, end)):
            return "ed-style diff (diff -e), not a unified diff"
    if whole and _RCS.fullmatch(line):
        return "RCS-format diff (diff -n), not a unified diff"
    return None


def refuse_foreign(
    lines: Sequence[bytes],
    start: int,
    end: int,
    error: Callable[..., PatchError],
    *,
    header: bool,
    whole: bool = False,
) -> None:
    """Raise when ``lines[start:end]`` (text git would skip) holds a diff git cannot apply.

    ``header``: the free text before the first file section (only unambiguous markers count).
    ``whole``: the file has no file section at all; always raises, saying what it looks like."""
    for i in range(start, end):
        kind = _kind(lines, i, end, header=header, whole=whole)
        if kind:
            raise error(f"unsupported patch format: {kind}", line=i + 1)
    if whole:
        if not any(line.strip() for line in lines):
            raise error("empty patch file (no diff in it)")
        if any(b"\x1b[" in line for line in lines):
            raise error("no diff found: the text holds ANSI color codes (saved from `git diff --color`?)")
        raise error("no diff found: not a git or unified diff (git apply: 'No valid patches in input')")
