"""The file being patched, as ``git apply`` sees it: an *image*, and where a hunk fits in it.

This mirrors git's ``apply.c`` (v2.39, default options: no fuzz, ``--whitespace=warn``, no
``--recount``, no ``--unidiff-zero``):

* the file is a list of lines split after each ``\\n`` (the last one may lack it);
* hunks apply in order to the evolving image; each search starts at the hunk's ``+`` side
  start (``newpos - 1``) and tries pos, pos+1, pos-1, pos+2, ... (``find_pos``);
* a hunk with ``oldpos`` 0 or 1 must match at the start, one without trailing context at
  the end; with the default context limit git never reduces context nor drops these rules;
* lines written by an earlier hunk of the same file can't be matched again (``LINE_PATCHED``);
* matching is a byte comparison of the whole preimage (``match_fragment``), including git's
  quirk that a preimage whose last line has no newline also matches a longer image line
  when the rest of that line is whitespace (git compares ``preimage->len`` bytes after a
  whitespace-blind line hash).

Searching is bounded per file by a work budget (``SEARCH_BUDGET``, in lines compared) far above
what any real patch stack needs; a hostile file/patch pair that exhausts it gets its remaining
hunks reported as not tried, instead of minutes of scanning. A failed hunk is described (the
first mismatch, the nearest partial match) by the image too, within the same budget.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from vimesync.patches.model import Hunk, HunkFailure

_GIT_SPACE = b" \t\n\r"  # git's sane_ctype isspace(); \v and \f are not spaces to git
_MAX_VOTES_PER_LINE = 512  # diagnostics: ignore lines (blank, "}") that occur everywhere
_MAX_NEAREST = 64  # diagnostics: look for the nearest match of this many failed hunks per file
_NEAR = 64  # search this far from the start line one line at a time, then by index
# Work per file, in lines compared: a candidate position costs its preimage length plus
# _CANDIDATE_COST (Python overhead), a search by index (C speed) one unit per 16 lines of the
# file, a diagnosis one per line. A failed hunk in a file of 100,000 lines costs about 110,000
# (most of it the diagnosis, done for at most 64 hunks per file); a hostile pair would
# otherwise spend minutes per hunk. About 2-4 s of work on this budget.
SEARCH_BUDGET = 50_000_000
_CANDIDATE_COST = 32


def split_lines(data: bytes) -> list[bytes]:
    """Split like git's ``prepare_image``: after every ``\\n``; a final partial line is kept."""
    return io.BytesIO(data).readlines()  # binary readlines splits after b"\n" only


def git_line_hash(line: bytes) -> int:
    """git's ``hash_line``: a whitespace-blind 32-bit hash (part of its matching rule)."""
    return _hash_bytes(line.translate(None, _GIT_SPACE))


def _hash_bytes(stripped: bytes) -> int:
    h = 0
    for b in stripped:
        h = (h * 3 + b) & 0xFFFFFFFF
    return h


class Image:
    """A file being patched: its lines plus git's per-line "written by a hunk" flag."""

    def __init__(self, data: bytes, budget: int = SEARCH_BUDGET) -> None:
        self.lines = split_lines(data)
        self.patched = bytearray(len(self.lines))
        self.budget = budget  # work left (see SEARCH_BUDGET); below 0: searching stopped
        self._hashes: dict[bytes, int] = {}  # git_line_hash of each distinct line seen
        self._diagnosed = 0  # failed hunks described so far
        self._codes: _LineCodes | None = None  # built on the first far search, then kept in step

    def data(self) -> bytes:
        return b"".join(self.lines)

    def apply_hunk(self, hunk: Hunk) -> int | str:
        """Apply one hunk in place. Return its offset in lines, or a failure reason."""
        pre = hunk.old_lines
        post = hunk.new_lines
        match_beginning = hunk.old_start in (0, 1)
        match_end = hunk.trailing_context == 0
        pos = hunk.new_start - 1 if hunk.new_start else 0
        try:
            at = self.find(pre, pos, match_beginning, match_end)
        except _Exhausted:
            self.budget = -1
            return f"search budget exhausted: {_NOT_DECIDED}"
        if at < 0:
            if match_beginning and match_end:
                return "hunk must match the whole file"
            if match_beginning:
                return "hunk must match at the start of the file"
            if match_end:
                return "hunk must match at the end of the file"
            return "context does not match"
        self.lines[at : at + len(pre)] = post
        self.patched[at : at + len(pre)] = b"\x01" * len(post)
        if self._codes is not None:
            self._codes.replace(at, len(pre), post)
        return at - pos

    def find(self, pre: list[bytes], pos: int, match_beginning: bool, match_end: bool) -> int:
        """git's ``find_pos``: the first matching line by distance from the start, forward first."""
        nr, n = len(self.lines), len(pre)
        last = nr - n  # the last line a preimage of n lines can start at
        if last < 0:
            return -1
        if match_beginning:
            if match_end and last != 0:
                return -1
            return 0 if self.matches(pre, 0, match_end) else -1
        if match_end:
            return last if self.matches(pre, last, True) else -1
        start = min(pos, nr)
        if n == 0:
            return start
        # Prefilter on one preimage line that must be equal byte for byte: the longest one, as
        # long lines are rare (a hostile hunk of blank lines must not cost a scan per line).
        simple = _simple(pre)
        exact = n if pre[-1].endswith(b"\n") else n - 1  # lines compared exactly
        k = max(range(exact), key=lambda i: (len(pre[i]), -i)) if simple and exact else -1
        anchor = pre[k] if k >= 0 else None
        lines = self.lines
        reach = max(start, last - start)
        near = reach if anchor is None else min(reach, _NEAR)
        self.spend(near)  # the loop itself, even where no candidate is in range
        for d in range(near + 1):
            for c in (start + d, start - d) if d else (start,):
                if 0 <= c <= last and (anchor is None or lines[c + k] == anchor):
                    if self.matches(pre, c, False, simple):
                        return c
        if near == reach:
            return -1
        return self._find_far(pre, start, near, last, exact, simple)

    def _find_far(self, pre: list[bytes], start: int, near: int, last: int, exact: int, simple: bool) -> int:
        """:meth:`find` beyond ``near`` lines of ``start``: the exact lines (``pre[:exact]``) found
        with bytes.find over line codes (C speed, so a hostile file of repeated lines costs what it
        costs git), merging both directions in git's order: nearest first, forward before backward
        at equal distance."""
        self.spend(len(self.lines) // 16 + 1)  # the index scans below read the whole file, at C speed
        if self._codes is None:
            self._codes = _LineCodes(self.lines)
        needle = self._codes.needle(pre[:exact])
        if needle is None:
            return -1
        fwd = self._codes.forward(needle, start + near + 1, last)
        bwd = self._codes.backward(needle, 0, start - near - 1)
        f, b = next(fwd, None), next(bwd, None)
        while f is not None or b is not None:
            if b is None or (f is not None and f - start <= start - b):
                assert f is not None
                if self.matches(pre, f, False, simple):
                    return f
                f = next(fwd, None)
            else:
                if self.matches(pre, b, False, simple):
                    return b
                b = next(bwd, None)
        return -1

    def matches(self, pre: list[bytes], c: int, match_end: bool, simple: bool | None = None) -> bool:
        """git's ``match_fragment`` at line ``c`` (bounds already checked by the caller).
        ``simple``: every preimage line but the last ends with a newline (see :func:`_simple`)."""
        n = len(pre)
        self.spend(n + _CANDIDATE_COST)
        if self.patched.find(1, c, c + n) != -1:
            return False
        lines = self.lines
        if n == 0:
            return True
        if simple is None:
            simple = _simple(pre)
        if simple:
            if lines[c : c + n - 1] != pre[:-1]:
                return False
            p, got = pre[-1], lines[c + n - 1]
            if got == p:
                return True
            # git compares only len(preimage) bytes: a last line without "\n" matches a longer
            # image line when their whitespace-blind hashes agree (e.g. "x" vs "x\n").
            return (
                not match_end
                and not p.endswith(b"\n")
                and got.startswith(p)
                and self._hash(got) == self._hash(p)
            )
        return self._matches_bytes(pre, c, match_end)

    def spend(self, units: int) -> None:
        """Charge search work; raise _Exhausted once the file's budget is gone."""
        self.budget -= units
        if self.budget < 0:
            raise _Exhausted

    def _hash(self, line: bytes) -> int:
        h = self._hashes.get(line)
        if h is None:
            stripped = line.translate(None, _GIT_SPACE)
            self.spend(3 * len(stripped) + len(line) // 64)  # a Python loop, byte by byte
            h = self._hashes[line] = _hash_bytes(stripped)
        return h

    def _matches_bytes(self, pre: list[bytes], c: int, match_end: bool) -> bool:
        # Hostile shapes (a "no newline" line in the middle): do exactly what git does, comparing
        # len(preimage) bytes of the image from line c (never more: joining the whole tail per
        # candidate made a hostile hunk quadratic in the file).
        n = len(pre)
        self.spend(8 * n + _CANDIDATE_COST)  # Python work per line here, not a C slice compare
        lines = self.lines
        for i in range(n):
            if self._hash(pre[i]) != self._hash(lines[c + i]):
                return False
        want = b"".join(pre)
        if match_end:  # the caller only asks at c = len(lines) - n: the tail is these n lines
            tail = b"".join(lines[c:])
            return len(want) == len(tail) and tail == want
        end, size = c + n, sum(map(len, lines[c : c + n]))
        while size < len(want) and end < len(lines):
            size += len(lines[end])
            end += 1
        return b"".join(lines[c:end]).startswith(want)

    # -----------------------------------------------------------------------------------------
    # diagnostics (only computed on failure)

    def diagnose(self, path: str, nth: int, hunk: Hunk, reason: str) -> HunkFailure:
        """Describe a failed hunk: the first mismatch at the header position and the nearest
        partial match of its preimage."""
        pre = hunk.old_lines
        pos = hunk.new_start - 1 if hunk.new_start else 0
        first = expected = found = None
        for i, want in enumerate(pre):
            j = pos + i
            if j >= len(self.lines):
                first, expected, found = i + 1, _show(want), None
                break
            if self.lines[j] != want or self.patched[j]:
                first, expected = i + 1, _show(want)
                found = _show(self.lines[j]) + (" (changed by an earlier hunk)" if self.patched[j] else "")
                break
        if len(pre) > len(self.lines):
            reason = f"preimage ({len(pre)} lines) is longer than the file ({len(self.lines)} lines)"
        self._diagnosed += 1
        nearest, matched = None, None
        if self._diagnosed <= _MAX_NEAREST and self.budget >= len(self.lines) + len(pre):
            self.budget -= len(self.lines) + len(pre)
            nearest, matched = self._nearest(pre, pos)
        return HunkFailure(
            file=path,
            hunk=nth,
            header=hunk.header,
            reason=reason,
            first_mismatch=first,
            expected=expected,
            found=found,
            nearest_line=None if nearest is None else nearest + 1,
            nearest_matched=matched,
            mismatch_line=None if first is None else pos + first,
        )

    def _nearest(self, pre: list[bytes], pos: int) -> tuple[int | None, int | None]:
        """The start line where most preimage lines match exactly (ties: closest to ``pos``)."""
        where: dict[bytes, list[int]] = {}
        wanted = set(pre)
        for j, line in enumerate(self.lines):
            if line in wanted:
                where.setdefault(line, []).append(j)
        votes: dict[int, int] = {}
        for i, want in enumerate(pre):
            hits = where.get(want, ())
            if len(hits) > _MAX_VOTES_PER_LINE:
                continue
            for j in hits:
                start = j - i
                if 0 <= start < len(self.lines):
                    votes[start] = votes.get(start, 0) + 1
        if not votes:
            return None, None
        best = min(votes, key=lambda s: (-votes[s], abs(s - pos), s))
        # Count again without the frequency cap so the figure we report is exact.
        lines = self.lines
        matched = sum(1 for i, want in enumerate(pre) if best + i < len(lines) and lines[best + i] == want)
        return best, matched


class _Exhausted(Exception):
    """The file's search budget ran out (internal to this module)."""


_NOT_DECIDED = "the hunk was not searched for everywhere, so whether it applies is not decided"


class _LineCodes:
    """An image's lines as 4-byte codes in one bytearray, so a run of lines is found with
    ``bytearray.find``. Only a code's first byte has the high bit set: matches are aligned."""

    def __init__(self, lines: list[bytes]) -> None:
        self.ids: dict[bytes, int] = {}
        self.hay = bytearray(b"".join(map(self._code, lines)))

    def _code(self, line: bytes) -> bytes:
        i = self.ids.setdefault(line, len(self.ids))
        return bytes((0x80 | (i >> 21) & 0x7F, (i >> 14) & 0x7F, (i >> 7) & 0x7F, i & 0x7F))

    def replace(self, at: int, n: int, post: list[bytes]) -> None:
        self.hay[at * 4 : (at + n) * 4] = b"".join(map(self._code, post))

    def needle(self, exact: list[bytes]) -> bytes | None:
        """The codes of ``exact``; None when a line is nowhere in the image."""
        if any(line not in self.ids for line in exact):
            return None
        return b"".join(map(self._code, exact))

    def forward(self, needle: bytes, lo: int, hi: int) -> Iterator[int]:
        """Start lines in [lo, hi] where ``needle`` occurs, ascending."""
        pos, end = max(lo, 0) * 4, hi * 4 + len(needle)
        while (j := self.hay.find(needle, pos, end)) >= 0:
            yield j // 4
            pos = j + 4

    def backward(self, needle: bytes, lo: int, hi: int) -> Iterator[int]:
        """Start lines in [lo, hi] where ``needle`` occurs, descending."""
        start, end = max(lo, 0) * 4, hi * 4 + len(needle)
        while end - start >= len(needle) and (j := self.hay.rfind(needle, start, end)) >= 0:
            yield j // 4
            end = j - 4 + len(needle)


def _simple(pre: list[bytes]) -> bool:
    # True for every real diff: only the last old line can lack "\n" ("\ No newline ...").
    # Then a line-by-line comparison is exactly git's byte comparison.
    return all(p.endswith(b"\n") for p in pre[:-1])


MAX_SHOWN = 200  # bytes of a line shown in a diagnostic: enough to recognise it, never a whole file


def _show(line: bytes) -> str:
    """A line for a diagnostic: at most MAX_SHOWN bytes of it (a source line can be a whole file,
    e.g. a minified or pseudo file), decoded; renderers escape what it contains."""
    if len(line) > MAX_SHOWN:
        return line[:MAX_SHOWN].decode("utf-8", "replace") + f"... ({len(line):,} bytes)"
    return line.decode("utf-8", "replace")
