"""Reading ``GIT binary patch`` sections of a diff (git's apply.c ``parse_binary_hunk``).

Each hunk is "literal N" or "delta N" (N = inflated size), then lines of one length
character ('A'-'Z' = 1-26 bytes, 'a'-'z' = 27-52) followed by base85 groups, then a blank
line. The bytes are a zlib stream that must inflate to exactly N bytes. Sizes are capped
before anything proportional to them is allocated. Applying a delta is ``binary.py``'s job.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Callable, Sequence

from vimesync.errors import PatchError
from vimesync.patches.binary import BinaryPatchError, delta_sizes
from vimesync.patches.model import BinaryHunk

MAX_BINARY_BYTES = 64 << 20  # one hunk's inflated data (= binary.MAX_RESULT)
# A parsed patch holds its binary data inflated, and applying it holds the results until the
# patch is written out: per patch, both together may add up to this much (as announced). The
# whole series holds at most twice this (check.MAX_STACK_BINARY).
MAX_BINARY_HELD = 128 << 20

ErrorFactory = Callable[..., PatchError]
_SIZE = re.compile(rb"[ \t\n\v\f\r]*([+-]?)(\d*)")


def _hunk(lines: Sequence[bytes], k: int, error: ErrorFactory, label: str) -> tuple[BinaryHunk | None, int]:
    """One binary hunk starting at line ``k``; (None, k) when line ``k`` does not start one."""
    line = lines[k] if k < len(lines) else b""
    if line.startswith(b"delta "):
        method, rest = "delta", line[6:]
    elif line.startswith(b"literal "):
        method, rest = "literal", line[8:]
    else:
        return None, k
    size = _announced_size(rest, k, error, label)
    deflated, j = _data_lines(lines, k + 1, error, label)
    data = _inflate(deflated, size)
    if data is None:
        raise error(
            f"corrupt binary patch: data does not inflate to the announced {size} bytes",
            line=k + 1,
            file=label,
        )
    if method == "delta" and len(data) >= 4:
        # Our own limits, checked while the patch is read so nothing is allocated for them later:
        # a size varint longer than 64 bits, a result over binary.MAX_RESULT. (A delta that does
        # not fit the file is git's "does not apply", decided when applying.)
        try:
            delta_sizes(data)
        except BinaryPatchError as exc:
            raise error(str(exc), line=k + 1, file=label) from None
    return BinaryHunk(method=method, size=size, data=data), j


def _announced_size(rest: bytes, k: int, error: ErrorFactory, label: str) -> int:
    """The N of "literal N"/"delta N" (``rest``, on line ``k``), read as git's strtoul does, capped."""
    m = _SIZE.match(rest)
    assert m is not None  # the pattern matches the empty string
    sign, digits = m.groups()
    size = int(digits) if digits and len(digits) <= 12 else (0 if not digits else MAX_BINARY_BYTES + 1)
    if sign == b"-" and size:
        size = MAX_BINARY_BYTES + 1  # strtoul wraps a negative number to a huge one
    if size > MAX_BINARY_BYTES:
        raise error(
            f"binary hunk announces {digits.decode()} bytes, over the {MAX_BINARY_BYTES}-byte limit",
            line=k + 1,
            file=label,
        )
    return size


def _data_lines(lines: Sequence[bytes], j: int, error: ErrorFactory, label: str) -> tuple[bytes, int]:
    """The bytes of a hunk's data lines from line ``j`` up to the blank line that ends the hunk,
    and the index of the line after that one."""
    chunks: list[bytes] = []
    total = 0
    while True:
        line = lines[j] if j < len(lines) else b""
        if len(line) == 1:  # the blank line that ends the hunk
            return b"".join(chunks), j + 1
        chunk = _data_line(line, j, error, label)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_BINARY_BYTES:
            raise error("binary hunk larger than the limit", line=j + 1, file=label)
        j += 1


def _data_line(line: bytes, j: int, error: ErrorFactory, label: str) -> bytes:
    """One data line (line ``j``): a length character, then base85 groups, decoded."""
    if len(line) < 7 or (len(line) - 2) % 5:
        raise error("corrupt binary patch: bad base85 line length", line=j + 1, file=label)
    max_bytes = (len(line) - 2) // 5 * 4
    c = line[0]
    if 0x41 <= c <= 0x5A:
        nbytes = c - 0x41 + 1
    elif 0x61 <= c <= 0x7A:
        nbytes = c - 0x61 + 27
    else:
        raise error("corrupt binary patch: bad length character", line=j + 1, file=label)
    if max_bytes < nbytes or nbytes <= max_bytes - 4:
        raise error("corrupt binary patch: length character does not match the line", line=j + 1, file=label)
    try:
        decoded = base64.b85decode(line[1:-1])
    except ValueError as exc:
        raise error(f"corrupt binary patch: {exc}", line=j + 1, file=label) from None
    return decoded[:nbytes]


def _inflate(data: bytes, size: int) -> bytes | None:
    # Ask for one byte more than announced: a stream that yields more is corrupt, and the
    # bound keeps a zlib bomb from allocating past the cap.
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, size + 1)
    except (zlib.error, binascii.Error):
        return None
    if not d.eof or len(out) != size:
        return None
    return out


def held_size(hunk: BinaryHunk) -> int:
    """The bytes a binary hunk holds: its inflated data, plus the result a delta announces
    (a literal is its result)."""
    if hunk.method == "delta" and len(hunk.data) >= 4:
        return hunk.size + delta_sizes(hunk.data)[1]
    return hunk.size


def parse_binary(lines: Sequence[bytes], k: int, error: ErrorFactory, label: str) -> tuple[BinaryHunk, int]:
    """Parse the hunks after a ``GIT binary patch`` line (line ``k`` is the first hunk's
    "literal"/"delta" line). Return the forward hunk and the index of the next line; the
    optional reverse hunk is validated and dropped."""
    forward, j = _hunk(lines, k, error, label)
    if forward is None:
        raise error("unrecognized binary patch", line=k + 1, file=label)
    _reverse, j = _hunk(lines, j, error, label)
    return forward, j
