from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.upstream import Upstream, build_downstream
from vimesync.pathmap import PathMap
from vimesync.upstream.diffkeys import changed_lines, map_paths
from vimesync.upstream.downstreamindex import scan_downstream
from vimesync.upstream.mirrored import mark_mirrored
from vimesync.upstream.model import MIRRORED
from vimesync.upstream.walk import walk

MAP = (("slime/", "vime/"),)


@pytest.fixture(scope="module")
def downstream(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Repo:
    return build_downstream(tmp_path_factory.mktemp("down") / "vime", upstream)


def _mirrored(upstream: Upstream, downstream: Path, path_map=MAP, repo="THUDM/slime"):  # type: ignore[no-untyped-def]
    prs = walk(upstream.path, None, "main").prs
    index = scan_downstream(downstream, upstream_repo=repo)
    return {p.number: p.decision for p in mark_mirrored(upstream.path, prs, index, path_map) if p.decision}


@pytest.mark.slow
def test_every_kind_of_evidence(upstream: Upstream, downstream: Repo) -> None:
    found = _mirrored(upstream, downstream.path)
    assert set(found) == {1, 2, 3, 4}
    assert {n for n, d in found.items() if d.status == MIRRORED} == {1, 2, 4}
    assert found[1].mirrored_by == "trailer Upstream-PR"
    assert found[4].mirrored_by == "trailer Upstream-Commit/cherry-picked"
    assert found[2].mirrored_by == "patch-id of the PR"  # reworded, no trailer
    # A conflict edit: similar content only suggests (issue 18, finding 2), unless accepted.
    assert found[3].status == "applicable" and found[3].mirrored_by is None
    assert found[3].looks_mirrored is not None and found[3].looks_mirrored.startswith("similar content")
    assert "looks mirrored" in found[3].reason and "--accept-similar" in found[3].reason
    prs = walk(upstream.path, None, "main").prs
    index = scan_downstream(downstream.path, upstream_repo="THUDM/slime")
    accepted = {
        p.number: p.decision for p in mark_mirrored(upstream.path, prs, index, MAP, accept_similar=True)
    }
    assert accepted[3] is not None and accepted[3].status == MIRRORED
    assert (accepted[3].mirrored_by or "").startswith("similar content")
    assert "already downstream" in found[2].reason and downstream.head()[:4] not in found[2].reason


def test_without_the_path_map_only_trailers_count(upstream: Upstream, downstream: Repo) -> None:
    assert set(_mirrored(upstream, downstream.path, path_map=())) == {1, 4}


def test_trailer_naming_another_repository_is_ignored(upstream: Upstream, downstream: Repo) -> None:
    found = _mirrored(upstream, downstream.path, repo="someone/else")
    assert found[1].mirrored_by == "patch-id of the PR"  # the content still proves it


def test_patch_id_per_commit_and_abbreviated_upstream_commit(tmp_path: Path, upstream: Upstream) -> None:
    s = upstream.shas
    d = Repo(tmp_path / "d")
    d.commit("start", {"x": "x"})
    d.commit("parts, one", {"vime/parts.py": "one = 1\nalso_one = 1\nstill_one = 1\n"})
    d.commit("parts, two", {"vime/parts2.py": "two = 2\nalso_two = 2\nstill_two = 2\n"})
    d.commit(f"foo\n\nUpstream-Commit: {s['pr6'][:10]}", {"y": "y"})
    found = _mirrored(upstream, d.path)
    assert found[4].mirrored_by == "patch-id of each commit"  # picked one by one, reworded
    assert found[6].mirrored_by == "trailer Upstream-Commit/cherry-picked"  # abbreviated sha
    assert set(found) == {4, 6}


def test_rebase_merged_pr_squashed_downstream(tmp_path: Path, upstream: Upstream) -> None:
    d = Repo(tmp_path / "d")
    d.commit("start", {"x": "x"})
    d.commit(
        "parts",
        {
            "vime/parts.py": "one = 1\nalso_one = 1\nstill_one = 1\n",
            "vime/parts2.py": "two = 2\nalso_two = 2\nstill_two = 2\n",
        },
    )
    assert _mirrored(upstream, d.path)[4].mirrored_by == "patch-id of the PR"


def test_same_commit_in_shared_history(tmp_path: Path, upstream: Upstream) -> None:
    from vimesync import git

    clone = tmp_path / "fork"
    git.run(tmp_path, ["clone", "-q", str(upstream.path), str(clone)])
    git.run(clone, ["reset", "-q", "--hard", upstream.shas["pr3"]])
    found = _mirrored(upstream, clone)
    assert set(found) == {1, 2, 3} and found[3].mirrored_by == "same commit"


def test_map_paths_and_changed_lines() -> None:
    diff = (
        b"diff --git a/slime/a.py b/slime/a.py\n--- a/slime/a.py\n+++ b/slime/a.py\n"
        b"@@ -1 +1 @@\n-old line\n+new line\n+}\n"
    )
    mapped = map_paths(diff, PathMap(MAP))
    assert b"a/vime/a.py b/vime/a.py" in mapped and b"+++ b/vime/a.py" in mapped
    assert set(changed_lines(mapped)) == {b"vime/a.py\0-oldline", b"vime/a.py\0+newline"}


def test_map_paths_stops_at_the_folder_a_pair_names() -> None:
    diff = b"diff --git a/slimeextra/x.py b/slime/y.py\n--- a/slimeextra/x.py\n+++ b/slime/y.py\n"
    mapped = map_paths(diff, PathMap((("slime", "vime"),)))  # no trailing slash: the folder slime/
    assert mapped == b"diff --git a/slimeextra/x.py b/vime/y.py\n--- a/slimeextra/x.py\n+++ b/vime/y.py\n"


def test_only_real_trailers_count(tmp_path: Path) -> None:
    """``Upstream-PR:``/``Upstream-Commit:`` count only in the trailer block git itself parses."""
    d = Repo(tmp_path / "d")
    d.commit("import", {"a": "a\n"})
    d.commit(
        "Talk\n\nUpstream-PR: THUDM/slime#11\nUpstream-Commit: abcdef1\n\nmore prose after it", {"b": "b\n"}
    )
    d.commit("Port\n\nprose\n\nUpstream-PR: THUDM/slime#12\nUpstream-Commit: 1234567\nSigned-off-by: A <a@x>")
    d.commit("Quote\n\n    Upstream-PR: THUDM/slime#13", {"c": "c\n"})  # indented: a quoted message
    # A squash merge keeps each picked commit's "(cherry picked from commit …)" line mid-message;
    # but so does any message that quotes one (an upstream title or body a carry copied): only
    # git's own -x position, the last paragraph, counts (issue 18, finding 1).
    d.commit("Squash (#9)\n\n* fix\n\n(cherry picked from commit 7654321)\n\n* fmt", {"e": "e\n"})
    d.commit("Pick\n\nbody\n\n(cherry picked from commit 89abcde)", {"f": "f\n"})
    index = scan_downstream(d.path, upstream_repo="THUDM/slime")
    assert set(index.prs) == {12}
    assert set(index.short_commits) == {"1234567", "89abcde"}
