"""Histories are hostile input: a commit adding a 98 MB file (100 KB compressed) used to cost
6.5 GB while ``git log -p`` was read whole. The log is now streamed and each commit's text held
up to a bound; a commit over it is matched by its trailers only."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo, commit_env
from vimesync import git
from vimesync.upstream.diffkeys import MAX_LINE_KEYS
from vimesync.upstream.difflog import split_commits, stream_commits
from vimesync.upstream.downstreamindex import scan_downstream, trailers_of
from vimesync.upstream.mirrored import mark_mirrored
from vimesync.upstream.walk import walk

pytestmark = pytest.mark.slow  # large histories read in bounded memory and time

_MB = 1024 * 1024


def _chunked(data: bytes, sizes: list[int]) -> list[bytes]:
    out, pos, i = [], 0, 0
    while pos < len(data):
        out.append(data[pos : pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    return out


def test_streamed_split_equals_the_whole_split_at_any_chunking() -> None:
    sha = [f"{n:040x}" for n in range(1, 6)]
    log = (
        f"commit {sha[0]}\n    msg\n    commit {sha[4]}\n\ndiff --git a/x b/x\n+commit {sha[4]}\n".encode()
        + f"commit {sha[1]}\n".encode()
        + b"x" * 300  # a long line with no newline in one chunk
        + f"\ncommit {sha[2]}\n\n".encode()
        + b"y" * 100
        + f"commit {sha[4]}\n".encode()  # not at a line start: no commit
        + f"\ncommit {sha[3]}".encode()  # the last line, no newline: not a commit line
    )
    # As split_commits, except that a last line without its newline is not a commit line.
    want = [(s, t, True) for s, t in split_commits(log)][:2]
    want.append((sha[2], log.split(f"commit {sha[2]}".encode())[1], True))
    rng = random.Random(7)
    for sizes in ([1], [2], [3], [47], [48], [49], [64], [len(log)]) + tuple(
        [rng.randint(1, 80) for _ in range(20)] for _ in range(30)
    ):
        assert list(stream_commits(_chunked(log, sizes))) == want, sizes


def test_a_commit_over_the_bound_keeps_its_head_and_drops_the_rest() -> None:
    def log() -> Iterator[bytes]:  # 256 MiB streamed: never held
        yield b"commit " + b"1" * 40 + b"\n    msg\n\x1fvimesync-trailers\nUpstream-PR: #7\n"
        yield b"\ndiff --git a/x b/x\n"
        block = b"+a\n" * (1 << 14)
        for _ in range(256 * _MB // len(block)):
            yield block
        yield b"commit " + b"2" * 40 + b"\n    small\n"

    got = list(stream_commits(log(), cap=_MB))
    assert [(s[:1], len(t), whole) for s, t, whole in got] == [("1", _MB, False), ("2", 11, True)]
    assert "Upstream-PR: #7" in trailers_of(got[0][1])


def _big_commit(repo: Repo, message: str, files: dict[str, bytes]) -> str:
    for name, data in files.items():
        (repo.path / name).write_bytes(data)
    repo.git("add", "--", *files)
    return repo.commit(message)


def test_downstream_commit_over_the_bound_is_matched_by_trailers_only(tmp_path: Path) -> None:
    up = Repo(tmp_path / "up")
    up.commit("start", {"s": "s\n"})
    # Three files under git's big-file threshold whose diff (+ 9 MiB) is over the commit bound.
    files = {f"f{i}.txt": b"".join(b"%d line %d\n" % (i, n) for n in range(300_000)) for i in range(3)}
    big = _big_commit(up, "feat: big (#5)", files)
    up.commit("feat: small (#6)", {"small.py": "one = 1\ntwo = 2\nthree = 3\n"})
    down = Repo(tmp_path / "down")
    down.commit("start", {"s": "s\n"})
    _big_commit(down, "port big", files)  # same content, no trailer
    down.commit("port small", {"small.py": "one = 1\ntwo = 2\nthree = 3\n"})
    _big_commit(down, "again\n\nUpstream-PR: #9", {"g.txt": files["f0.txt"] * 2, "h.txt": files["f1.txt"]})
    index = scan_downstream(down.path)
    assert index.scanned == 4 and index.too_big == 2 and set(index.prs) == {9}
    assert len(index.lines) == 2 and len(index.patch_ids) == 2  # start and small only
    notes: list[str] = []
    found = mark_mirrored(up.path, walk(up.path, None, "main").prs, index, notes=notes)
    status = {pr.number: pr.decision.mirrored_by if pr.decision else None for pr in found}
    assert status == {5: None, 6: "patch-id of the PR"}
    assert big and len(notes) == 1 and "#5" in notes[0] and "only trailers" in notes[0]


_SCAN = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from vimesync.upstream.downstreamindex import scan_downstream
index = scan_downstream(Path(sys.argv[1]))
print(index.scanned, sorted(index.prs))
"""


def test_a_huge_file_in_downstream_history_is_read_in_bounded_memory(tmp_path: Path) -> None:
    down = Repo(tmp_path / "down")
    down.commit("start", {"s": "s\n"})
    big = b"a\n" * (24 * _MB)  # 2 x 72 MiB of diff lines, ~100 KB compressed: GBs when read whole
    _big_commit(down, "add big\n\nUpstream-PR: #3", {"b1.txt": big, "b2.txt": big})
    del big
    proc = subprocess.run(
        [sys.executable, "-c", _SCAN, str(down.path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],  # this tree's vimesync
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[0] == "2 [3]"  # within 1 GiB of address space, git included


def test_a_commit_of_too_many_distinct_lines_is_compared_by_patch_id_only(tmp_path: Path) -> None:
    # 64 MiB of such lines used to be indexed whole: 1.8 GB and 18 s before any matching.
    text = "".join(f"v{n} = {n}\n" for n in range(MAX_LINE_KEYS + 1))
    up = Repo(tmp_path / "up")
    up.commit("start", {"s": "s\n"})
    up.commit("feat: table (#5)", {"table.py": text})
    up.commit("feat: other table (#6)", {"other.py": text + "v = 0\n"})
    down = Repo(tmp_path / "down")
    down.commit("start", {"s": "s\n"})
    down.commit("port", {"table.py": text})
    down.commit("port other, edited", {"other.py": text + "v = 1\n"})
    index = scan_downstream(down.path)
    assert index.no_content == 2 and len(index.lines) == 1 and len(index.patch_ids) == 3
    found = mark_mirrored(up.path, walk(up.path, None, "main").prs, index)
    status = {pr.number: pr.decision.mirrored_by if pr.decision else None for pr in found}
    assert status == {5: "patch-id of the PR", 6: None}


def _slow_diff_pair(seed: int) -> tuple[bytes, bytes]:
    """Two 1 MB files of random a/b lines: git needs seconds to diff them (8 MB: minutes)."""
    rng = random.Random(seed)
    return tuple(b"".join(rng.choice((b"a\n", b"b\n")) for _ in range(500_000)) for _ in range(2))  # type: ignore[return-value]


def test_git_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    from vimesync import git
    from vimesync.errors import GitTimeout

    old, new = _slow_diff_pair(3)
    (tmp_path / "a").write_bytes(old)
    (tmp_path / "b").write_bytes(new)
    with pytest.raises(GitTimeout, match="ran over 0.3 s"):
        for _ in git.stream(tmp_path, ["diff", "--no-index", "a", "b"], deadline=0.3):
            pass


def test_downstream_history_git_is_slow_to_diff_is_read_for_trailers_only(tmp_path: Path) -> None:
    # A pull request commits files whose diffs take git minutes: the content pass stops at its
    # deadline, and every commit is still read for its trailers (a second pass without diffs).
    old, new = _slow_diff_pair(4)
    down = Repo(tmp_path / "down")
    down.commit("start", {"s": "s\n"})
    down.commit("carry #7\n\nUpstream-PR: o/r#7", {"seven.py": "x = 7\n"})
    down.commit("data", {"data.txt": old})
    down.commit("data again", {"data.txt": new})
    index = scan_downstream(down.path, upstream_repo="o/r", content_seconds=0.3)
    assert index.timed_out
    assert 7 in index.prs and index.scanned == 4


@pytest.mark.parametrize("on_top", [0, 1_000_000_000])  # no skew; a commit dated 2001 on top
def test_a_commit_with_an_old_clock_on_top_hides_no_carry_below_it(tmp_path: Path, on_top: int) -> None:
    # git's --since stops its walk at the first older commit: the scan judges each commit by its
    # own date, so a maintainer's skewed clock (or a stranger's set one) hides no carried PR.
    down = Repo(tmp_path / "down")
    down.commit("start", {"s": "s\n"})
    down.commit("carry\n\nUpstream-PR: o/r#7", {"a.py": "a = 1\n"})
    recent = int(down.git("log", "-1", "--format=%ct").strip())
    if on_top:
        down.write({"b.py": "b = 1\n"})
        git.run(down.path, ["commit", "-q", "-m", "configure"], env=commit_env(on_top))
    else:
        down.commit("configure", {"b.py": "b = 1\n"})
    since = datetime.fromtimestamp(recent - 30, timezone.utc).isoformat()
    index = scan_downstream(down.path, upstream_repo="o/r", since=since)
    assert set(index.prs) == {7}
    assert index.scanned == (1 if on_top else 2)  # the old-dated commit itself is out of range
