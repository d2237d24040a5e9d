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
