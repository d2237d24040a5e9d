"""The builtin applier with GNU patch's semantics (``patch -p1 --fuzz=N [--forward] --batch``,
GNU patch 2.7.6): one file's hunks against its bytes, as GNU finds, fuzzes and writes them.

Where GNU differs from ``git apply`` (see :mod:`vimesync.patches.image`):

* the input file is never changed while the hunks are placed: every hunk is searched for in the
  *original* lines, at its old-side start plus the offset the hunks before it landed at
  (``in_offset``, accumulating), and never before the last line an earlier hunk changed
  (``last_frozen_line``);
* the search tries the expected line, then +1, -1, +2, -2 ... as far as the file reaches;
* with fuzz F a hunk that matches nowhere is tried again ignoring up to F lines of context at both
  ends (context lines beyond the shorter side's are the first to go: a hunk with 3 lines of leading
  and 1 of trailing context ignores 1 leading line at fuzz 1 and 2 leading and 0 trailing at
  fuzz 2, see ``locate``); fuzz never exceeds the hunk's longer context;
* a hunk with less leading than trailing context (after fuzz) whose old side starts at line 1
  must match at the start of the file, one with more leading than trailing context at its end;
* context lines are copied from the file, not from the patch: what fuzz ignored stays as it was;
* a hunk that fails does not stop the others (GNU writes them to the reject file); the file is
  written with the hunks that applied (``FileApplied.partial``: the tree writes it, and the
  other files of the patch, when the patch fails, as GNU leaves them);
* when the first hunk matches nowhere but matches with its sides swapped, the patch is taken for
  reversed: with ``forward`` every hunk of the file is skipped ("Reversed (or previously applied)
  patch detected!  Skipping patch."), without it GNU's ``--batch`` assumes ``-R`` and un-applies
  the whole file section.

Output follows GNU's writer byte for byte, including the newline it adds after a line without one
when more text follows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vimesync.patches.apply import FileApplied, apply_content
from vimesync.patches.image import split_lines
from vimesync.patches.model import DEFAULT_FUZZ, FilePatch, Hunk, HunkFailure, HunkLines, HunkOffset

REVERSED_SKIPPED = "Reversed (or previously applied) patch detected!  Skipping patch."
REVERSED_ASSUMED = "Reversed (or previously applied) patch detected!  Assuming -R."


@dataclass(frozen=True)
class GnuHunk:
    """One hunk as GNU patch reports it."""

    number: int  # 1-based
    applied: bool
    ignored: bool = False  # the file was skipped (--forward on a reversed patch): never tried
    at: int = 0  # "succeeded at"/"FAILED at": the line GNU names (output coordinates)
    fuzz: int = 0
    offset: int = 0  # GNU's "(offset N lines)": where it matched minus the header's old start
    reason: str = ""  # why it failed
    note: str = ""  # after "FAILED at N": " (different line endings)"


@dataclass(frozen=True)
class GnuFile:
    """One file section applied as GNU patch does it."""

    data: bytes | None  # what GNU writes (with only the hunks that applied); None: not written
    hunks: tuple[GnuHunk, ...]
    reversed: bool = False  # the first hunk applied only with its sides swapped
    skipped: bool = False  # reversed and --forward: nothing written

    @property
    def ok(self) -> bool:
        return not self.skipped and all(h.applied for h in self.hunks)


@dataclass(frozen=True)
class _Pattern:
    """A hunk as GNU holds it: the old side (the pattern), the new side, the contexts."""

    first: int  # GNU's p_first: the old side's first line (one more when it is empty)
    old: list[tuple[str, bytes]]  # (" " or "-", line)
    new: list[tuple[str, bytes]]  # (" " or "+", line)
    prefix: int  # context lines before the first change
    suffix: int  # context lines after the last change


def _pattern(hunk: Hunk, swapped: bool) -> _Pattern | None:
    tags = hunk.lines.tags
    if swapped:
        tags = tags.translate(str.maketrans("+-", "-+"))
    lines = [(t, content) for t, (_, content) in zip(tags, hunk.lines, strict=True)]
    old = [(t, c) for t, c in lines if t != "+"]
    new = [(t, c) for t, c in lines if t != "-"]
    changes = [i for i, (t, _) in enumerate(lines) if t != " "]
    if not changes:
        return None  # GNU: "malformed patch" (a hunk with nothing to change)
    old_start, old_count = (hunk.new_start, hunk.new_count) if swapped else (hunk.old_start, hunk.old_count)
    first = old_start + (1 if old_count == 0 else 0)
    return _Pattern(first, old, new, changes[0], len(lines) - 1 - changes[-1])


class _File:
    """GNU's state while one file section is applied: the input lines (never changed), the output
    so far, ``last_frozen_line`` (input lines consumed), ``in_offset`` and ``out_offset``."""

    def __init__(self, data: bytes) -> None:
        self.input = split_lines(data)
        self.out: list[bytes] = []
        self.after_newline = True
        self.frozen = 0
        self.in_offset = 0
        self.out_offset = 0

    # -- locating (GNU's locate_hunk / patch_match) ---------------------------------------------

    def locate(self, p: _Pattern, fuzz: int) -> int:
        """The 1-based input line where ``p`` matches with ``fuzz``, 0 for none; moves in_offset."""
        first_guess = p.first + self.in_offset
        pat_lines = len(p.old)
        context = max(p.prefix, p.suffix)
        prefix_fuzz = fuzz + p.prefix - context
        suffix_fuzz = fuzz + p.suffix - context
        nlines = len(self.input)
        max_where = nlines - (pat_lines - suffix_fuzz) + 1
        min_where = self.frozen + 1
        max_pos = max_where - first_guess
        max_neg = first_guess - min_where
        max_offset = max(max_pos, max_neg)
        if not pat_lines:
            return first_guess  # an empty pattern matches anywhere
        if first_guess <= max_neg:
            max_neg = first_guess - 1  # never lines <= 0
        if prefix_fuzz < 0 and p.first <= 1:
            # Only at the start of the file (both negative cannot happen: one side is the context).
            offset = 1 - first_guess
            if (
                self.frozen <= p.prefix
                and offset <= max_pos
                and self.match(p, first_guess + offset, 0, suffix_fuzz)
            ):
                self.in_offset += offset
                return first_guess + offset
            return 0
        prefix_fuzz = max(prefix_fuzz, 0)
        if suffix_fuzz < 0:
            # Only at the end of the file.
            offset = first_guess - (nlines - pat_lines + 1)
            if offset <= max_neg and self.match(p, first_guess - offset, prefix_fuzz, 0):
                self.in_offset -= offset
                return first_guess - offset
            return 0
        if max_pos < 0:
            min_offset = first_guess - max_where
        elif max_neg < 0:
            min_offset = first_guess - min_where
        else:
            min_offset = 0
        for offset in range(min_offset, max_offset + 1):
            if offset <= max_pos and self.match(p, first_guess + offset, prefix_fuzz, suffix_fuzz):
                self.in_offset += offset
                return first_guess + offset
            if offset <= max_neg and self.match(p, first_guess - offset, prefix_fuzz, suffix_fuzz):
                self.in_offset -= offset
                return first_guess - offset
        return 0

    def match(self, p: _Pattern, where: int, prefix_fuzz: int, suffix_fuzz: int) -> bool:
        lines = self.input
        iline = where + prefix_fuzz  # 1-based
        for pline in range(prefix_fuzz, len(p.old) - suffix_fuzz):
            i = iline - 1
            if not 0 <= i < len(lines) or lines[i] != p.old[pline][1]:
                return False
            iline += 1
        return True

    def line_endings_note(self, p: _Pattern, at: int) -> str:
        """GNU's ``check_line_endings``: " (different line endings)" when exactly one of the
        hunk's first old line and input line ``at`` ends in CRLF."""
        if not p.old or not 0 < at <= len(self.input):
            return ""
        ours, theirs = p.old[0][1], self.input[at - 1]
        return " (different line endings)" if ours.endswith(b"\r\n") != theirs.endswith(b"\r\n") else ""

    # -- writing (GNU's apply_hunk / copy_till / spew_output) -----------------------------------

    def _emit(self, line: bytes) -> None:
        self.out.append(line)
        self.after_newline = line.endswith(b"\n")

    def copy_till(self, last: int) -> bool:
        if self.frozen > last:
            return False  # "misordered hunks! output would be garbled"
        while self.frozen < last:
            self.frozen += 1
            line = self.input[self.frozen - 1] if self.frozen <= len(self.input) else b""
            if line:
                if not self.after_newline:
                    self.out.append(b"\n")
                self._emit(line)
        return True

    def apply(self, p: _Pattern, where: int) -> bool:
        """Write the hunk matched at ``where``; False (nothing written past the copy) when the
        hunks are misordered."""
        base = where - 1
        old, new = p.old, p.new
        o = n = 0
        while o < len(old):
            if old[o][0] == "-":
                if not self.copy_till(base + o):
                    return False
                self.frozen += 1
                o += 1
            elif n >= len(new):
                break
            elif new[n][0] == "+":
                if not self.copy_till(base + o):
                    return False
                self._emit(new[n][1])
                n += 1
            else:
                o += 1
                n += 1
        if n < len(new) and new[n][0] == "+":
            if not self.copy_till(base + o):
                return False
            while n < len(new) and new[n][0] == "+":
                if not self.after_newline:
                    self.out.append(b"\n")
                self._emit(new[n][1])
                n += 1
        self.out_offset += len(new) - len(old)
        return True

    def finish(self) -> bytes:
        self.copy_till(len(self.input))
        return b"".join(self.out)


def strip_crs(hunks: Sequence[Hunk]) -> tuple[Hunk, ...]:
    """``hunks`` as GNU patch reads a section whose header ends in CRLF (``--binary`` off): each
    line ending in CRLF without its CR (one marked "No newline at end of file" too: GNU strips
    the CR before it drops the newline). Lines ending in LF alone stay as they are."""
    out = []
    for h in hunks:
        pairs = [(t, _strip_cr(c)) for t, c in h.lines]
        out.append(replace(h, lines=HunkLines(pairs)))
    return tuple(out)


def _strip_cr(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2] + b"\n"
    if line.endswith(b"\r"):  # "...\r\n" then "\\ No newline at end of file": the parser took the \n
        return line[:-1]
    return line


def gnu_apply(
    data: bytes,
    hunks: Sequence[Hunk],
    *,
    fuzz: int = DEFAULT_FUZZ,
    forward: bool = False,
    strip_cr: bool = False,
) -> GnuFile:
    """Apply ``hunks`` to ``data`` as ``patch --fuzz=<fuzz> [--forward] --batch`` does one file;
    ``strip_cr``: the section's header ends in CRLF, so GNU strips the CRs of its lines first
    (see :func:`strip_crs`)."""
    if strip_cr:
        hunks = strip_crs(hunks)
    f = _File(data)
    out: list[GnuHunk] = []
    reverse = False
    for nth, hunk in enumerate(hunks, 1):
        p = _pattern(hunk, reverse)
        if p is None:
            out.append(GnuHunk(nth, False, at=hunk.old_start + f.out_offset, reason="malformed hunk"))
            continue
        max_fuzz = min(fuzz, max(p.prefix, p.suffix))
        level = 0
        where = 0
        while True:
            where = f.locate(p, level)
            if nth == 1 and not where and not reverse:
                swapped = _pattern(hunk, True)
                assert swapped is not None
                where = f.locate(swapped, level)
                if where and forward:
                    skipped = tuple(
                        GnuHunk(k, False, ignored=True, reason=REVERSED_SKIPPED)
                        for k in range(1, len(hunks) + 1)
                    )
                    return GnuFile(None, skipped, reversed=True, skipped=True)
                if where:
                    reverse = True
                    p = swapped
                    break
            if where:
                break
            level += 1
            if level > max_fuzz:
                break
        at = (where or p.first) + f.out_offset
        if where and f.apply(p, where):
            out.append(GnuHunk(nth, True, at=at, fuzz=level, offset=f.in_offset))
        else:
            reason, note = ("misordered hunks", "") if where else ("FAILED", f.line_endings_note(p, at))
            out.append(GnuHunk(nth, False, at=at, reason=reason, note=note))
    return GnuFile(f.finish(), tuple(out), reversed=reverse)


def apply_content_gnu(
    data: bytes, fp: FilePatch, *, creating: bool = False, fuzz: int = DEFAULT_FUZZ, forward: bool = False
) -> FileApplied:
    """:func:`vimesync.patches.apply.apply_content` with GNU patch's semantics: the hunks that
    applied at an offset or with fuzz, every failed hunk (GNU tries them all), a reversed patch as
    failures naming what GNU would do. Binary sections are git's (GNU cannot apply them)."""
    path = fp.path
    if fp.binary is not None or fp.binary_without_data:
        return apply_content(data, fp, creating=creating)
    got = gnu_apply(data, fp.hunks, fuzz=fuzz, forward=forward, strip_cr=fp.crlf_header)
    headers = {n: h.header for n, h in enumerate(fp.hunks, 1)}
    # What GNU leaves in a file whose section fails (see FileApplied.partial): only a file patched
    # in place (no rename, copy or deletion), and only when it changed.
    in_place = fp.old_path is not None and fp.old_path == fp.new_path
    partial = got.data if in_place and got.data is not None and got.data != data else None
    if got.reversed:
        # Skipped (--forward) or un-applied (GNU --batch assumes -R): the patch is in the file
        # already either way; the tree finds out which hunks (it tries the patch in reverse). A
        # patch that fails for another reason leaves the file un-applied, as GNU does.
        reason = REVERSED_SKIPPED if got.skipped else REVERSED_ASSUMED
        failures = tuple(HunkFailure(path, n, headers[n], reason) for n in headers)
        return FileApplied(path, None, failures=failures, partial=partial)
    offsets = tuple(
        HunkOffset(path, h.number, h.offset, h.fuzz) for h in got.hunks if h.applied and (h.offset or h.fuzz)
    )
    gnu = f"(GNU patch, fuzz {fuzz})"
    failures = tuple(
        HunkFailure(path, h.number, headers[h.number], f"{h.reason} at {h.at}{h.note} {gnu}")
        for h in got.hunks
        if not h.applied
    )
    if failures:
        return FileApplied(path, None, offsets, failures, partial=partial)
    if fp.is_delete:
        if got.data:
            return FileApplied(
                path,
                None,
                offsets,
                (HunkFailure(path, 0, "", "Not deleting file as content differs from patch"),),
            )
        return FileApplied(path, None, offsets)
    return FileApplied(path, got.data, offsets)
