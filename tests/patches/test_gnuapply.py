"""The GNU applier on hand-made cases, each checked against real GNU patch when it is installed:
fuzz dropping context from both ends, offsets accumulating, --forward skipping a reversed patch,
--batch assuming -R, a failed hunk not stopping the others."""

from __future__ import annotations

import pytest

from tests.builders.gnupatch import GNU_PATCH, builtin_gnu, disagreement

FILE = b"".join(b"line %d\n" % i for i in range(1, 21))
PATCH = b"""--- a/f.txt
+++ b/f.txt
@@ -5,7 +5,7 @@
 line 5
 line 6
 line 7
-line 8
+LINE 8
 line 9
 line 10
 line 11
@@ -14,3 +14,3 @@
 line 14
-line 15
+LINE 15
 line 16
"""


def _check_with_gnu(original: bytes, patch: bytes, **kw: object) -> None:
    if GNU_PATCH is not None:
        assert disagreement(original, patch, **kw) is None  # type: ignore[arg-type]


def test_fuzz_ignores_the_first_and_last_context_line_and_offsets_accumulate() -> None:
    drifted = FILE.replace(b"line 5\n", b"line five\n").replace(b"line 1\n", b"line 1\nnew a\nnew b\n")
    got = builtin_gnu(drifted, PATCH, fuzz=2)
    assert got.ok and [(h.fuzz, h.offset) for h in got.hunks] == [(1, 2), (0, 2)]
    assert got.data == drifted.replace(b"line 8\n", b"LINE 8\n").replace(b"line 15\n", b"LINE 15\n")
    _check_with_gnu(drifted, PATCH, fuzz=2)


def test_without_enough_fuzz_the_hunk_fails_and_the_next_still_applies() -> None:
    drifted = FILE.replace(b"line 5\n", b"line five\n")
    got = builtin_gnu(drifted, PATCH, fuzz=0)
    assert [h.applied for h in got.hunks] == [False, True] and not got.ok
    assert got.data == drifted.replace(b"line 15\n", b"LINE 15\n")
    _check_with_gnu(drifted, PATCH, fuzz=0)


@pytest.mark.parametrize("forward", [True, False])
def test_a_patch_already_applied_is_reversed(forward: bool) -> None:
    applied = FILE.replace(b"line 8\n", b"LINE 8\n").replace(b"line 15\n", b"LINE 15\n")
    got = builtin_gnu(applied, PATCH, forward=forward)
    assert got.reversed and got.skipped == forward
    assert got.data == (None if forward else FILE)  # --batch without --forward un-applies it
    _check_with_gnu(applied, PATCH, forward=forward)


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


SMALL = b"one\ntwo\nthree\nfour\nfive\n"
SMALL_PATCH = b"--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n one\n two\n-three\n+THREE\n four\n five\n"


@pytest.mark.parametrize(
    ("file_crlf", "patch_crlf", "applies"),
    [(False, False, True), (False, True, True), (True, False, False), (True, True, False)],
)
def test_a_crlf_patch_has_its_crs_stripped_as_gnu_does(
    file_crlf: bool, patch_crlf: bool, applies: bool
) -> None:
    # GNU patch 2.7.6 strips the CRs of a patch whose header ends in CRLF ("Stripping trailing
    # CRs from patch; use --binary to disable."), then compares byte for byte: a CRLF patch
    # applies to an LF file and fails on the CRLF file it was made from ("different line
    # endings"), the opposite of comparing the patch as it is.
    original = _crlf(SMALL) if file_crlf else SMALL
    patch = _crlf(SMALL_PATCH) if patch_crlf else SMALL_PATCH
    got = builtin_gnu(original, patch)
    assert got.ok is applies
    if applies:
        assert got.data == SMALL.replace(b"three", b"THREE")  # LF lines written, as GNU writes them
    else:
        assert got.hunks[0].note == " (different line endings)"
    _check_with_gnu(original, patch)


@pytest.mark.parametrize(
    "patch",
    [
        # the header decides: CRLF "+++" line, hunk lines mixed (LF ones kept as they are)
        b"--- a/f.txt\r\n+++ b/f.txt\r\n@@ -1,5 +1,5 @@\n one\r\n two\n-three\r\n+THREE\n four\n five\r\n",
        # an LF "+++" line: nothing is stripped, a CRLF line matches only a CRLF line
        b"--- a/f.txt\r\n+++ b/f.txt\n@@ -1,5 +1,5 @@\r\n"
        b" one\r\n two\r\n-three\r\n+THREE\r\n four\r\n five\r\n",
        # the last line without a newline, CRLF before the marker
        b"--- a/f.txt\r\n+++ b/f.txt\r\n@@ -4,2 +4,2 @@\r\n four\r\n-five\r\n\\ No newline at end of file\r\n"
        b"+FIVE\r\n\\ No newline at end of file\r\n",
    ],
)
@pytest.mark.parametrize("file_crlf", [False, True])
def test_mixed_line_endings_follow_gnu(patch: bytes, file_crlf: bool) -> None:
    original = _crlf(SMALL) if file_crlf else SMALL
    if b"No newline" in patch:
        original = original.rstrip(b"\r\n")
    if GNU_PATCH is None:
        pytest.skip("GNU patch is not installed")
    assert disagreement(original, patch) is None
