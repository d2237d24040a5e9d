"""The pure part of a replay: the upstream lines a resolution does not hold."""

from __future__ import annotations

from vimesync.carry.resolutions import (
    MAX_LINE,
    MAX_LINES,
    Resolution,
    Resolutions,
    ResolvedFile,
    dropped_lines,
)


def test_dropped_lines_are_the_upstream_added_lines_the_commit_lacks() -> None:
    base, theirs = b"a\nb\nc\n", b"a\nB\nc\nd\n"
    assert dropped_lines(base, theirs, b"a\nb\nc\n") == (("B", "d"), 2, 2)
    assert dropped_lines(base, theirs, theirs) == ((), 0, 2)
    assert dropped_lines(base, theirs, b"a\nB\nc\n") == (("d",), 1, 2)
    assert dropped_lines(b"", b"x", b"") == (("x",), 1, 1)  # no final newline


def test_lines_are_counted_as_multisets() -> None:
    # a line upstream adds twice, kept once: one dropped
    assert dropped_lines(b"", b"x\nx\n", b"x\n") == (("x",), 1, 2)
    assert dropped_lines(b"x\n", b"x\nx\n", b"x\n") == ((), 0, 1)  # one "x" is there: kept


def test_shown_lines_are_bounded_and_escaped() -> None:
    theirs = b"".join(b"line %d\n" % i for i in range(100)) + b"\x1b[31m" + b"y" * 1000 + b"\r\n\xff\n"
    shown, missing, added = dropped_lines(b"", theirs, b"")
    assert (missing, added) == (102, 102) and len(shown) == MAX_LINES
    last, *_ = dropped_lines(b"", theirs[theirs.index(b"\x1b") :], b"")[0]
    assert last.startswith("\\x1b[31m") and len(last) == MAX_LINE + 1 and last.endswith("…")
    assert dropped_lines(b"", b"\xff\n", b"")[0] == ("\ufffd",)


def test_resolved_paths_name_their_prs() -> None:
    f = ResolvedFile("a.py", "conflict: content")
    done = Resolutions(
        (Resolution(2, "t", "c" * 40, "d" * 40, (f,)), Resolution(None, "direct", "e" * 40, "d" * 40, (f,))),
        replayed=2,
    )
    assert done.paths() == {"a.py": ("#2", "eeeeeeeeeeee")}
    assert done.of_pr(2) is done.items[0] and done.of_pr(3) is None
