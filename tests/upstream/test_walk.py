from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.upstream import Upstream
from vimesync import git
from vimesync.errors import BadInput, GitError
from vimesync.upstream import walk as walk_mod
from vimesync.upstream.logparse import parse_log
from vimesync.upstream.walk import walk


def test_whole_history_shapes(upstream: Upstream) -> None:
    s = upstream.shas
    r = walk(upstream.path, None, "main")
    assert r.base == git.NULL_SHA and r.tip == s["pr10"]
    assert [p.number for p in r.prs] == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    prs = {p.number: p for p in r.prs}

    assert prs[1].kind == "squash" and prs[1].commits == (s["pr1"],) and prs[1].paths == ("slime/foo.py",)
    assert prs[1].title == "Add foo"

    assert prs[2].kind == "merge" and prs[2].title == "Add bar"
    assert prs[2].commits == (s["pr2a"], s["pr2b"], s["pr2"])
    assert prs[2].paths == ("docs/bar.md", "slime/bar.py")

    # The fork's PR #7 merge and the main->big sync merge belong to #3; main's own commit does not.
    assert prs[3].commits == (s["pr3a"], s["fork7"], s["fork7m"], s["bigsync"], s["pr3"])
    assert s["direct1"] not in prs[3].commits
    assert prs[3].paths == ("slime/big.py", "slime/helper.py")  # README came from main already
    assert 7 not in prs

    assert prs[4].kind == "rebase" and prs[4].commits == (s["pr4a"], s["pr4b"])
    assert prs[4].paths == ("slime/parts.py", "slime/parts2.py") and prs[4].merge_commit == s["pr4b"]

    assert prs[5].reverts == 1 and prs[5].title == 'Revert "Add foo"'
    assert prs[10].paths == ()

    directs = {d.sha: d for d in r.direct_commits}
    assert list(directs) == [s["root"], s["direct1"], s["direct2"]]
    assert directs[s["root"]].paths == ("README.md", "slime/__init__.py", "slime/core.py")  # root commit
    assert directs[s["direct2"]].reverts == 2  # Revert "Merge pull request #2 …"
    assert r.first_parents[0] == s["root"] and r.first_parents[-1] == s["pr10"]


def test_range_excludes_base_history(upstream: Upstream) -> None:
    s = upstream.shas
    r = walk(upstream.path, s["root"], s["pr3"])
    assert [p.number for p in r.prs] == [1, 2, 3]
    assert [d.sha for d in r.direct_commits] == [s["direct1"]]
    assert r.base == s["root"]


def test_base_inside_a_merged_branch(upstream: Upstream) -> None:
    # BASE is an ancestor of TIP but not on its first-parent line: git's BASE..TIP semantics.
    s = upstream.shas
    r = walk(upstream.path, s["pr3a"], s["pr3"])
    assert [p.number for p in r.prs] == [3]
    assert r.prs[0].commits == (s["fork7"], s["fork7m"], s["bigsync"], s["pr3"])
    assert [d.sha for d in r.direct_commits] == [s["direct1"]]


def test_empty_range(upstream: Upstream) -> None:
    r = walk(upstream.path, upstream.shas["pr3"], upstream.shas["pr3"])
    assert r.prs == () and r.direct_commits == ()
    r = walk(upstream.path, upstream.shas["pr3"], "main~8")  # the same commit by another name
    assert r.prs == () and r.direct_commits == () and r.base == r.tip == upstream.shas["pr3"]


def test_reversed_range_is_refused(upstream: Upstream) -> None:
    # TIP an ancestor of BASE: git walks nothing, but "nothing to sync" would hide the swap.
    s = upstream.shas
    with pytest.raises(BadInput) as exc:
        walk(upstream.path, "main", s["pr3"])
    msg = str(exc.value)
    assert f"TIP {s['pr3']} ({s['pr3'][:12]}) is an ancestor of BASE main" in msg
    assert f"the range is reversed; did you mean {s['pr3']}..main?" in msg


def test_base_not_an_ancestor(tmp_path: Path) -> None:
    r = Repo(tmp_path / "r")
    r.commit("one", {"a": "1"})
    fork = r.commit("two", {"a": "2"})
    r.branch("side", "HEAD~1")
    side = r.commit("side work", {"b": "1"})
    with pytest.raises(BadInput) as exc:
        walk(r.path, side, fork)
    msg = str(exc.value)
    assert "is not an ancestor" in msg
    assert exc.value.hint and "merge-base" in exc.value.hint and "1 first-parent commits" in exc.value.hint
    assert "--range" in exc.value.hint


def test_bad_input(tmp_path: Path, upstream: Upstream) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        walk(tmp_path, None, "HEAD")
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        walk(upstream.path, "nope", "main")
    with pytest.raises(GitError, match="no such directory"):
        walk(tmp_path / "missing", None, "HEAD")


def test_bare_mirror_gives_the_same_walk(tmp_path: Path, upstream: Upstream) -> None:
    mirror = tmp_path / "mirror.git"
    git.run(tmp_path, ["clone", "-q", "--mirror", str(upstream.path), str(mirror)])
    assert walk(mirror, None, "main") == walk(upstream.path, None, "main")


def test_one_streamed_log(monkeypatch: pytest.MonkeyPatch, upstream: Upstream) -> None:
    calls: list[list[str]] = []
    real_stream, real_run = git.stream, git.run

    def stream(repo, args, **kw):  # type: ignore[no-untyped-def]
        calls.append(["stream", *args])
        return real_stream(repo, args, **kw)

    def run(repo, args, **kw):  # type: ignore[no-untyped-def]
        calls.append(["run", *args])
        return real_run(repo, args, **kw)

    monkeypatch.setattr(git, "stream", stream)
    monkeypatch.setattr(git, "run", run)
    walk(upstream.path, None, "main")
    heavy = [c for c in calls if c[1] in ("log", "rev-list")]
    assert [c[:2] for c in heavy] == [["stream", "log"], ["run", "rev-list"]]


def test_parse_log_survives_any_chunking(upstream: Upstream) -> None:
    raw = b"".join(git.stream(upstream.path, walk_mod.log_args(None, "main")))
    whole = list(parse_log([raw]))
    bytewise = list(parse_log(raw[i : i + 1] for i in range(len(raw))))
    assert whole == bytewise and len(whole) == 13
    assert whole[-1].commit.subject == "init" and whole[-1].commit.parents == ()


def test_parse_log_matches_git_name_only(upstream: Upstream) -> None:
    # The same paths as git's own first-parent listing, commit by commit.
    out = subprocess.run(
        ["git", "log", "--first-parent", "-m", "--no-renames", "--name-only", "--format=@%H", "main"],
        cwd=upstream.path,
        capture_output=True,
        text=True,
        check=True,
        env=git.git_env(),  # not the developer's config (core.quotePath, log.showSignature...)
    ).stdout
    expected: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("@"):
            cur = expected.setdefault(line[1:], [])
        elif line:
            cur.append(line)
    raw = git.stream(upstream.path, walk_mod.log_args(None, "main"))
    assert {fp.commit.sha: list(fp.paths) for fp in parse_log(raw)} == expected


def test_revert_of_a_pr_before_base_is_linked_through_git(upstream: Upstream) -> None:
    # 'Revert "Add foo"' names no PR number; only its "This reverts commit" sha leads to #1.
    r = walk(upstream.path, upstream.shas["pr1"], "main")
    assert {p.number: p.reverts for p in r.prs}[5] == 1


def test_direct_merge_owns_its_side_commits(tmp_path: Path) -> None:
    r = Repo(tmp_path / "r")
    r.commit("init", {"a": "1"})
    r.branch("topic")
    side = r.commit("topic work", {"b": "1"})
    r.checkout("main")
    r.commit("main work", {"c": "1"})
    merge = r.merge("topic", "Merge branch 'topic'")
    result = walk(r.path, None, "main")
    assert result.prs == ()
    d = result.direct_commits[-1]
    assert (d.sha, d.side_commits, d.paths) == (merge, (side,), ("b",))
