"""Hostile commit messages cost linear time and bounded memory (issue 7).

Each input here would take minutes if the quadratic code came back; none of them is timed.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.upstream.attribution import attribute
from vimesync.upstream.downstreamindex import UPSTREAM_PR_RE, DownstreamIndex, lookup_commit
from vimesync.upstream.logparse import MAX_MESSAGE, MAX_SUBJECT, FirstParent, _tokens, parse_log
from vimesync.upstream.messages import pr_number, pr_title, split_suffix
from vimesync.upstream.model import Commit
from vimesync.upstream.walk import walk

OLD_SUFFIX = re.compile(r"\s*\(#(\d+)\)\s*$")  # the quadratic pattern split_suffix replaces


def _chunks(total: int, size: int = 1 << 16) -> Iterator[bytes]:
    piece = b"m" * size
    for _ in range(total // size):
        yield piece


@pytest.mark.slow
def test_tokens_of_a_huge_message_are_linear_and_capped() -> None:
    # 256 MiB in 64 KiB chunks: re-joining the buffer per chunk would copy ~500 GB.
    stream = itertools.chain([b"\0\0abc \0a <a@x>\0date\0"], _chunks(256 << 20), [b"\0path\0"])
    toks = list(_tokens(stream))
    assert toks[:5] == [b"", b"", b"abc ", b"a <a@x>", b"date"]
    # The head, plus the end of its (uncut) first line, where a (#N) suffix lives.
    assert len(toks[5]) == MAX_MESSAGE + len("(#123456789)") and toks[6:] == [b"path"]


def test_tokens_split_exactly_like_bytes_split() -> None:
    data = b"\0\0a\0bb\0\0ccc\0d" * 50
    for size in (1, 2, 3, 7, 64):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert list(_tokens(chunks, limit=10**9)) == [t for t in data.split(b"\0")]


def test_tokens_do_not_depend_on_where_the_stream_is_cut() -> None:
    """Every chunking of a stream gives the tokens of the whole stream in one chunk, also with the
    cap cutting tokens (the short-token fast path must never skip the state of a token in progress).
    No blanks: the kept end of an over-long first line is right-stripped per chunk, which this
    does not pin down."""
    rng = random.Random(12)
    alphabet = [b"\0", b"\0\0", b"a", b"\n", b"(#12)", b"x" * 7]
    for _ in range(3000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        cuts = sorted(rng.randint(0, len(data)) for _ in range(rng.randint(1, 5)))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        limit = rng.randint(0, 12)
        assert list(_tokens(chunks, limit)) == list(_tokens([data], limit)), (chunks, limit)


def test_parse_log_caps_subject_and_body() -> None:
    record = b"\0\0" + b"a" * 40 + b" \0x <x@y>\0date\0" + b"s" * 100_000 + b"\n\nbody\0\nf.py\0"
    [fp] = list(parse_log([record]))
    assert len(fp.commit.subject) == MAX_SUBJECT
    assert fp.paths == ("f.py",)


@pytest.mark.parametrize(
    "subject",
    [
        "Fix x (#12)",
        "Fix x (#12)   ",
        "Fix x(#12)",
        "Fix (#1) x",
        "Fix x (#12) (#13)",
        "(#7)",
        "Fix x (#)",
        "Fix x (12)",
        "Fix x",
        "",
        "Fix x \t(#3)\t",
    ],
)
def test_split_suffix_agrees_with_the_old_pattern(subject: str) -> None:
    m = OLD_SUFFIX.search(subject)
    want_n = int(m.group(1)) if m else None
    want_title = OLD_SUFFIX.sub("", subject).strip()
    title, n = split_suffix(subject)
    assert (title.strip(), n) == (want_title, want_n)


def test_suffix_on_a_long_run_of_spaces_is_linear() -> None:
    spaces = " " * 2_000_000  # the old search: ~4e12 steps
    assert pr_number(Commit(sha="a", parents=(), subject="Fix" + spaces + "x")) is None
    assert pr_title(Commit(sha="a", parents=(), subject="Fix" + spaces + "(#12)" + spaces)) == "Fix"
    assert pr_number(Commit(sha="a", parents=(), subject="Fix" + spaces + "(#12)" + spaces)) == 12


@pytest.mark.parametrize(
    "subject",
    ["Fix (#" + "9" * 5000 + ")", "Merge pull request #" + "9" * 5000 + " from a/b", "Fix (#1234567890)"],
)
def test_absurd_pr_numbers_are_no_pr(subject: str) -> None:
    # int() of 5,000 digits raises ValueError (a traceback) on Python >= 3.11.
    assert pr_number(Commit(sha="a", parents=(), subject=subject)) is None


def test_upstream_pr_trailer_with_absurd_number_is_ignored() -> None:
    assert UPSTREAM_PR_RE.search("Upstream-PR: #" + "9" * 5000) is None
    assert UPSTREAM_PR_RE.search("Upstream-PR: a/b#12").group(2) == "12"  # type: ignore[union-attr]


@pytest.mark.slow
def test_many_reverts_of_abbreviated_shas_are_not_quadratic() -> None:
    # 20,000 commits each reverting an abbreviated sha: scanning every commit per revert is 4e8 steps.
    n = 20_000
    shas = [hashlib.sha1(str(i).encode()).hexdigest() for i in range(n + 1)]
    fps = [
        FirstParent(
            Commit(
                sha=shas[i],
                parents=(shas[i - 1],),
                subject=f"Revert thing {i} (#{i + 1})",
                body=f"This reverts commit {shas[i - 1][:7]}.",
            ),
            ("f.py",),
        )
        for i in range(1, n + 1)
    ]
    prs, directs = attribute(fps, {})
    assert len(prs) == n and not directs
    assert [pr.reverts for pr in prs[1:4]] == [2, 3, 4]  # each reverts the PR before it


@pytest.mark.slow
def test_many_short_trailers_are_not_quadratic() -> None:
    # 100,000 abbreviated Upstream-Commit trailers x 20,000 upstream commits: 2e9 prefix tests.
    short = {f"{i:07x}": f"{i:040x}" for i in range(100_000)}
    index = DownstreamIndex(short_commits=short)
    hits = [lookup_commit(index, f"{i:07x}" + "f" * 33) for i in range(20_000)]
    assert hits[5] == f"{5:040x}" and all(hits)
    # The longest (most specific) abbreviation wins.
    index = DownstreamIndex(short_commits={"abcdef1": "one", "abcdef12": "two"})
    assert lookup_commit(index, "abcdef12" + "0" * 32) == "two"
    assert lookup_commit(index, "abcdef10" + "0" * 32) == "one"


@pytest.mark.slow
def test_walk_of_a_huge_message(tmp_path: Path) -> None:
    """A real commit whose message is 4 MB (one line): the walk keeps its head only."""
    r = Repo(tmp_path / "up")
    base = r.commit("init", {"a.py": "a\n"})
    r.write({"a.py": "b\n"})
    message = tmp_path / "message"
    message.write_text("Big " + "x" * (4 << 20) + " (#5)\n\n" + "body " * 200_000)
    r.git("commit", "-q", "-F", str(message))
    r.write({"b.py": "b\n"})
    message.write_text("Direct " + "y" * (4 << 20) + "\n")
    r.git("commit", "-q", "-F", str(message))
    result = walk(r.path, base, "HEAD")
    # The (#5) lies far beyond the kept subject: still found, on the whole first line.
    [pr] = result.prs
    assert pr.number == 5 and pr.title == "Big " + "x" * (MAX_SUBJECT - len(" (#5)") - 4)
    assert pr.paths == ("a.py",)
    [d] = result.direct_commits
    assert len(d.title) == MAX_SUBJECT and d.paths == ("b.py",)


def test_a_padded_subject_keeps_its_pr_number() -> None:
    """A subject padded past MAX_SUBJECT, or past the MAX_MESSAGE cut, keeps its real ``(#N)``."""
    for pad in ("x" * 10_000, " " * 10_000, "x" * (MAX_SUBJECT - 3), "x" * (MAX_MESSAGE + 5)):
        record = b"\0\0" + b"a" * 40 + b" \0x <x@y>\0date\0Fix " + pad.encode() + b" (#77)  \0\nf.py\0"
        [fp] = list(parse_log([record]))
        assert len(fp.commit.subject) <= MAX_SUBJECT
        assert pr_number(fp.commit) == 77
        assert pr_title(fp.commit).startswith("Fix")
    # Cut in the middle of the suffix, in chunks, with trailing blanks in later chunks.
    record = b"\0\0" + b"a" * 40 + b" \0x <x@y>\0date\0Fix " + b"x" * 100 + b" (#77)" + b" " * 500
    for size in (1, 7, 64):
        chunks = [record[i : i + size] for i in range(0, len(record), size)] + [b"\nbody\0\nf.py\0"]
        toks = list(_tokens(chunks, limit=100))
        assert toks[5].startswith(b"Fix ") and split_suffix(toks[5].decode())[1] == 77, toks[5]
        assert toks[6:] == [b"\nf.py"]
