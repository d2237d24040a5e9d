"""The pure applier on hand-built hunks: git's position search, anchoring and byte rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders.trees import hunk, modify
from vimesync.patches.apply import NOT_TRIED, apply_content, apply_file
from vimesync.patches.image import SEARCH_BUDGET, Image, git_line_hash, split_lines
from vimesync.patches.model import FilePatch, Hunk


def lines(*items: str) -> bytes:
    return "".join(f"{x}\n" for x in items).encode()


CHANGE_C = hunk(2, 2, [(" ", b"b\n"), ("-", b"c\n"), ("+", b"C\n"), (" ", b"d\n")])


def test_split_lines_keeps_partial_last_line_and_crlf() -> None:
    assert split_lines(b"a\r\nb\nc") == [b"a\r\n", b"b\n", b"c"]
    assert split_lines(b"") == []
    assert split_lines(b"\n\n") == [b"\n", b"\n"]


def test_applies_at_header_position() -> None:
    res = apply_file(lines("a", "b", "c", "d", "e"), modify("f", CHANGE_C))
    assert res.ok and res.data == lines("a", "b", "C", "d", "e") and res.offsets == ()


@pytest.mark.parametrize(
    ("before", "offset"),
    [
        (["x", "x", "a", "b", "c", "d", "e"], 2),  # drifted down
        (["b", "c", "d", "e"], -1),  # drifted up
    ],
)
def test_applies_at_offset(before: list[str], offset: int) -> None:
    res = apply_file(lines(*before), modify("f", CHANGE_C))
    assert res.ok
    assert [(o.hunk, o.offset) for o in res.offsets] == [(1, offset)]


def test_ambiguous_match_prefers_nearest_then_forward() -> None:
    # "b c d" occurs at lines 1 and 5 (0-based) around the header position 3: both at distance 2;
    # git tries pos+1 before pos-1 at each distance, so the later copy wins.
    before = lines("b", "c", "d", "y", "z", "b", "c", "d")
    h = hunk(4, 4, [(" ", b"b\n"), ("-", b"c\n"), ("+", b"C\n"), (" ", b"d\n")])
    res = apply_file(before, modify("f", h))
    assert res.data == lines("b", "c", "d", "y", "z", "b", "C", "d")
    assert res.offsets[0].offset == 2


def test_hunk_at_line_one_must_match_at_start() -> None:
    h = hunk(1, 1, [("-", b"a\n"), ("+", b"A\n"), (" ", b"b\n")])
    assert apply_file(lines("a", "b"), modify("f", h)).ok
    res = apply_file(lines("new", "a", "b"), modify("f", h))
    assert not res.ok and "start" in res.failures[0].reason


def test_hunk_without_trailing_context_must_match_at_end() -> None:
    h = hunk(2, 2, [(" ", b"b\n"), ("+", b"c\n")])
    assert apply_file(lines("a", "b"), modify("f", h)).data == lines("a", "b", "c")
    res = apply_file(lines("a", "b", "z"), modify("f", h))
    assert not res.ok and "end" in res.failures[0].reason


def test_lines_written_by_an_earlier_hunk_cannot_match_again() -> None:
    first = hunk(1, 1, [(" ", b"a\n"), ("+", b"k\n"), (" ", b"b\n")])
    # The second hunk's context "k b" exists only because the first hunk wrote it.
    second = hunk(5, 5, [(" ", b"k\n"), ("-", b"b\n"), ("+", b"B\n"), (" ", b"c\n")])
    res = apply_file(lines("a", "b", "c"), modify("f", first, second))
    assert not res.ok and res.failures[0].hunk == 2


def test_preimage_longer_than_file_fails_with_reason() -> None:
    h = hunk(2, 2, [(" ", b"a\n"), (" ", b"b\n"), ("-", b"c\n"), (" ", b"d\n")])
    res = apply_file(lines("a"), modify("f", h))
    assert not res.ok and "longer than the file" in res.failures[0].reason


def test_crlf_is_compared_byte_exactly() -> None:
    h = hunk(2, 2, [(" ", b"b\r\n"), ("-", b"c\r\n"), ("+", b"C\r\n"), (" ", b"d\r\n")])
    assert apply_file(b"a\r\nb\r\nc\r\nd\r\n", modify("f", h)).data == b"a\r\nb\r\nC\r\nd\r\n"
    assert not apply_file(lines("a", "b", "c", "d"), modify("f", h)).ok


def test_no_newline_at_end_of_file_both_ways() -> None:
    add_eol = hunk(1, 1, [("-", b"a"), ("+", b"a\n")])
    assert apply_file(b"a", modify("f", add_eol)).data == b"a\n"
    assert not apply_file(b"a\n", modify("f", add_eol)).ok  # must match at the end, exactly
    drop_eol = hunk(1, 1, [("-", b"a\n"), ("+", b"a")])
    assert apply_file(b"a\n", modify("f", drop_eol)).data == b"a"


def test_no_eol_preimage_matches_longer_line_like_git() -> None:
    # git compares len(preimage) bytes after a whitespace-blind hash: "b" (no newline) matches
    # an image line "b\n" when the hunk has trailing context, and the result keeps git's bytes.
    h = hunk(1, 1, [("-", b"a\n"), ("+", b"A\n"), (" ", b"b")])
    res = apply_file(b"a\nb\nc\n", modify("f", h))
    assert res.ok and res.data == b"A\nbc\n"
    assert git_line_hash(b"b \t\r\n") == git_line_hash(b"b") != git_line_hash(b"b\x0b")


def test_creation_and_deletion_rules() -> None:
    create = FilePatch(old_path=None, new_path="f", hunks=(hunk(0, 1, [("+", b"x\n")]),))
    assert apply_file(None, create).data == b"x\n"
    assert "already exists" in apply_file(b"", create).failures[0].reason
    delete = FilePatch(old_path="f", new_path=None, hunks=(hunk(1, 0, [("-", b"x\n")]),))
    res = apply_file(b"x\n", delete)
    assert res.ok and res.data is None
    assert not apply_file(b"x\ny\n", delete).ok
    assert "No such file" in apply_file(None, modify("f", CHANGE_C)).failures[0].reason


def test_a_file_stops_at_its_first_failed_hunk_unless_all_are_asked_for() -> None:
    bad1 = hunk(1, 1, [(" ", b"q\n"), ("-", b"r\n"), (" ", b"s\n")])
    good = hunk(2, 2, [(" ", b"b\n"), ("-", b"c\n"), ("+", b"C\n"), (" ", b"d\n")])
    bad2 = hunk(9, 9, [(" ", b"t\n"), ("-", b"u\n"), (" ", b"v\n")])
    fp = modify("f", bad1, good, bad2)
    res = apply_content(lines("a", "b", "c", "d", "e"), fp)
    assert [f.hunk for f in res.failures] == [1] and res.data is None  # git stops there too
    res = apply_content(lines("a", "b", "c", "d", "e"), fp, all_hunks=True)  # --keep-going
    assert [f.hunk for f in res.failures] == [1, 3] and res.data is None


def test_diagnostics_name_first_mismatch_and_nearest_match() -> None:
    before = lines("1", "2", "3", "4", "5", "6", "b", "c", "D", "8")
    h = hunk(2, 2, [(" ", b"b\n"), ("-", b"c\n"), ("+", b"C\n"), (" ", b"d\n")])
    fail = apply_content(before, modify("f", h)).failures[0]
    assert fail.hunk == 1 and fail.header == h.header
    assert (fail.first_mismatch, fail.expected, fail.found) == (1, "b\n", "2\n")
    assert fail.nearest_line == 7 and fail.nearest_matched == 2


def test_diagnostics_say_nothing_when_nothing_matches() -> None:
    fail = apply_content(lines("x", "y"), modify("f", CHANGE_C)).failures[0]
    assert fail.nearest_line is None and fail.first_mismatch == 1


@pytest.fixture()
def work(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The search work charged to Image budgets (SEARCH_BUDGET's units): a count, unlike a clock
    it does not depend on the machine or its load."""
    spent = [0]
    spend = Image.spend

    def counting(self: Image, units: int) -> None:
        spent[0] += units
        spend(self, units)

    monkeypatch.setattr(Image, "spend", counting)
    return spent


def test_large_file_many_hunks_is_fast(work: list[int]) -> None:
    n = 50_000
    before = b"".join(b"line %d\n" % i for i in range(n))
    hunks = []
    for i in range(0, n - 3, 50):
        old = [b"line %d\n" % (i + k) for k in range(3)]
        hunks.append(hunk(i + 2, i + 2, [(" ", old[0]), ("-", old[1]), ("+", b"L\n"), (" ", old[2])]))
    res = apply_content(b"drift\n" * 7 + before, modify("f", *hunks))
    assert res.ok and len(res.offsets) == len(hunks)
    assert 0 < work[0] < 4 * n  # linear: a hunk's search does not rescan the file


def _git_find_pos(image: Image, pre: list[bytes], line: int, match_beginning: bool, match_end: bool) -> int:
    """git's find_pos loop, transcribed literally (the reference for the indexed search)."""
    nr = len(image.lines)
    if match_beginning:
        line = 0
    elif match_end:
        line = nr - len(pre)
    if line > nr or line < 0:
        line = nr
    backwards = forwards = current = line
    i = 0
    while True:
        if (
            len(pre) + current <= nr
            and not (match_end and len(pre) + current != nr)
            and not (match_beginning and current)
            and image.matches(pre, current, match_end)
        ):
            return current
        while True:
            if backwards == 0 and forwards == nr:
                return -1
            if i & 1:
                if backwards == 0:
                    i += 1
                    continue
                backwards -= 1
                current = backwards
            else:
                if forwards == nr:
                    i += 1
                    continue
                forwards += 1
                current = forwards
            break
        i += 1


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"\n", b"a", b"a \n"]), max_size=400),
    cut=st.integers(0, 400),
    size=st.integers(1, 4),
    line=st.integers(0, 450),
    patched=st.lists(st.integers(0, 400), max_size=5),
    flags=st.sampled_from([(False, False)] * 4 + [(True, False), (False, True), (True, True)]),
    no_eol=st.booleans(),
)
def test_indexed_search_is_gits_find_pos(
    words: list[bytes],
    cut: int,
    size: int,
    line: int,
    patched: list[int],
    flags: tuple[bool, bool],
    no_eol: bool,
) -> None:
    image = Image(b"".join(words))
    for p in patched:
        if p < len(image.patched):
            image.patched[p] = 1
    pre = [w if w.endswith(b"\n") else w + b"\n" for w in words[cut : cut + size]] or [b"a\n"]
    if no_eol:
        pre[-1] = pre[-1].rstrip(b"\n")  # the "x" matches "x\n" quirk
    assert image.find(pre, line, *flags) == _git_find_pos(image, pre, line, *flags)


def test_far_offsets_across_many_hunks() -> None:
    # 200 inserted lines move every hunk past the line-by-line window; the coded search is built
    # on the first hunk and kept in step with the hunks applied after it.
    body = [b"line %d\n" % i for i in range(1000)]
    hunks = []
    for i in range(10, 990, 100):
        hunks.append(
            hunk(i, i, [(" ", body[i - 1]), ("-", body[i]), ("+", b"NEW %d\n" % i), (" ", body[i + 1])])
        )
    drift = [b"pad\n"] * 200
    res = apply_content(b"".join(drift + body), modify("f", *hunks))
    assert res.ok and {o.offset for o in res.offsets} == {200}
    expected = list(body)
    for i in range(10, 990, 100):
        expected[i] = b"NEW %d\n" % i
    assert res.data == b"".join(drift + expected)


def test_hostile_repetitive_file_stays_fast(work: list[int]) -> None:
    many_blank = [
        hunk(i * 10 + 2, i * 10 + 2, [(" ", b"\n"), ("-", b"nope\n"), (" ", b"\n")]) for i in range(500)
    ]
    alternating = [
        hunk(i * 10 + 2, i * 10 + 2, [(" ", b"a\n"), ("-", b"a\n"), (" ", b"a\n")]) for i in range(100)
    ]
    assert not apply_content(b"\n" * 50_000, modify("f", *many_blank)).ok
    assert not apply_content(b"a\nb\n" * 25_000, modify("f", *alternating)).ok
    assert 0 < work[0] < 50_000  # the first failed hunk stops the file, found without a scan


# ---------------------------------------------------------------------------------------------
# bounded search: hostile shapes that used to take minutes


def _rewrite_all(n: int) -> Hunk:
    # Rewrites every line with itself: all of them become "written by a hunk", so every later
    # hunk finds its context everywhere and may use it nowhere.
    return hunk(1, 1, [("-", b"x\n")] * n + [("+", b"x\n")] * n)


def _stuck(i: int) -> Hunk:
    at = 10 + 3 * i
    return hunk(at, at, [(" ", b"x\n"), ("-", b"x\n"), ("+", b"y\n"), (" ", b"x\n")])


@pytest.mark.slow
def test_hunks_after_a_files_first_failure_are_not_tried() -> None:
    # 100,000 lines and 2,000 such hunks: 0.08 s of scanning per failed hunk, minutes in all.
    fp = modify("f", _rewrite_all(100_000), *map(_stuck, range(2_000)))
    res = apply_content(b"x\n" * 100_000, fp)
    assert [(f.hunk, f.reason) for f in res.failures] == [(2, "context does not match")]


def test_keep_going_search_is_bounded_per_file() -> None:
    fp = modify("f", _rewrite_all(20_000), *map(_stuck, range(2_000)))
    res = apply_content(b"x\n" * 20_000, fp, all_hunks=True, budget=2_000_000)
    reasons = [f.reason for f in res.failures]
    assert len(reasons) == 2_000 and res.data is None
    assert reasons[0] == "context does not match"  # searched everywhere, within the budget
    tried = reasons.index(NOT_TRIED)
    assert reasons[tried - 1].startswith("search budget exhausted")
    assert set(reasons[tried:]) == {NOT_TRIED}


@pytest.mark.slow
def test_keep_going_budget_is_far_above_a_real_drifted_file() -> None:
    # 50,000 distinct lines and 100 hunks that all fail: every one is searched and diagnosed.
    before = lines(*(f"line {i}" for i in range(50_000)))
    drifted = [
        hunk(i * 400 + 2, i * 400 + 2, [(" ", b"line %d\n" % (i * 400 + 1)), ("-", b"gone\n"), (" ", b"z\n")])
        for i in range(100)
    ]
    image = Image(before)
    for nth, h in enumerate(drifted, 1):
        reason = image.apply_hunk(h)
        assert reason == "context does not match"
        nearest = image.diagnose("f", nth, h, reason).nearest_line
        assert nearest == ((nth - 1) * 400 + 2 if nth <= 64 else None)  # 64: the diagnosis cap
    assert SEARCH_BUDGET - image.budget < SEARCH_BUDGET // 5
    res = apply_content(before, modify("f", *drifted), all_hunks=True)
    assert [f.reason for f in res.failures] == ["context does not match"] * 100


@pytest.mark.slow
def test_no_newline_in_the_middle_of_a_preimage_is_not_quadratic() -> None:
    # A "\\ No newline" line in the middle: git's byte comparison used to join the whole rest
    # of the file at every candidate line (90 s for this one hunk).
    h = hunk(5, 5, [(" ", b"x\n"), ("-", b"x"), ("+", b"z\n"), (" ", b"x\n")])
    res = apply_content(b"x\n" * 100_000, modify("f", h))
    assert [f.reason for f in res.failures] == ["context does not match"]


@pytest.mark.slow
def test_hashing_long_lines_is_charged_to_the_budget() -> None:
    # A last old line without "\\n" is compared with git's whitespace-blind hash, in Python, on
    # every candidate line that starts with it: 20 distinct 256 KiB lines cost 5 M units here.
    data = b"".join(b"q\n" + b"x" * (1 << 18) + b"%d\n" % i for i in range(20))
    h = hunk(3, 3, [("-", b"q\n"), ("+", b"r\n"), (" ", b"x")])
    res = apply_content(data, modify("f", h), budget=1_000_000)
    assert [f.reason[:23] for f in res.failures] == ["search budget exhausted"]
    assert [f.reason for f in apply_content(data, modify("f", h)).failures] == ["context does not match"]


def _git_match_fragment(image: list[bytes], pre: list[bytes], c: int, match_end: bool) -> bool:
    # git's match_fragment for these shapes, as the applier did it before: the whole tail.
    if any(git_line_hash(p) != git_line_hash(image[c + i]) for i, p in enumerate(pre)):
        return False
    want, tail = b"".join(pre), b"".join(image[c:])
    return not (match_end and len(want) != len(tail)) and tail.startswith(want)


_PIECES = [b"x\n", b"x", b"x \n", b"xx\n", b" x\n", b"y\n", b"\n", b"x\r\n"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8),
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4),
    st.booleans(),
)
def test_bytewise_match_reads_only_what_it_compares(
    image_lines: list[bytes], pre: list[bytes], match_end: bool
) -> None:
    image_lines = [line if line.endswith(b"\n") else line + b"\n" for line in image_lines[:-1]] + [
        image_lines[-1]
    ]
    image = Image(b"".join(image_lines))
    for c in range(len(image.lines) - len(pre) + 1):
        if match_end and c != len(image.lines) - len(pre):
            continue
        want = _git_match_fragment(image.lines, pre, c, match_end)
        assert image._matches_bytes(pre, c, match_end) == want


def test_a_failing_hunk_shows_only_the_start_of_a_huge_source_line() -> None:
    # The source may be anything (a pin naming a pseudo file, a minified bundle): a diagnostic
    # names the line, it never copies a whole file into the output.
    secret = b"TOKEN=" + b"s" * 1_000_000 + b"\n"
    res = apply_content(secret, modify("f", hunk(1, 1, [("-", b"x\n"), ("+", b"y\n")])))
    (failure,) = res.failures
    assert failure.found is not None and len(failure.found) < 300
    assert failure.found.endswith("(1,000,007 bytes)")
