"""The upstream tip from the config's branch: a fetched origin/<branch> ahead of the local one wins
(with a note); diverged ones are refused with both shas; an explicit tip is never second-guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.workspaces import workspace
from vimesync import git
from vimesync.app.upstreamsteps import walk
from vimesync.config import Config, UpstreamPin
from vimesync.errors import BadInput
from vimesync.upstream.tip import configured_tip

pytestmark = pytest.mark.slow  # fetches between real repositories


@pytest.fixture()
def clone(tmp_path: Path) -> tuple[Repo, Path, str]:
    """An upstream with two PRs and a clone of it whose local main is one PR behind origin/main."""
    up = Repo(tmp_path / "up")
    base = up.commit("init", {"a.py": "a = 1\n"})
    up.commit("First (#1)", {"b.py": "b = 1\n"})
    git.run(tmp_path, ["clone", "-q", str(up.path), str(tmp_path / "clone")])
    up.commit("Second (#2)", {"c.py": "c = 1\n"})
    clone = tmp_path / "clone"
    # What `git fetch origin` does, by hand: move origin/main to upstream's new tip.
    pack = git.run(up.path, ["pack-objects", "--revs", "--stdout", "-q"], input=f"{up.head()}\n".encode())
    git.run(clone, ["index-pack", "--stdin"], input=pack)
    git.run(clone, ["update-ref", "refs/remotes/origin/main", up.head()])
    return up, clone, base


def test_a_fetched_remote_tip_ahead_of_the_local_branch_wins(clone: tuple[Repo, Path, str]) -> None:
    up, path, base = clone
    for branch in ("main", "HEAD"):
        rev, note = configured_tip(path, branch)
        assert rev == "origin/main"
        assert note is not None and "1 commit ahead of the local main" in note
        assert 'branch = "origin/main"' in note
    cfg = Config(upstream_branch="main", upstream_pin=UpstreamPin(synced=base))
    result = walk(workspace(cfg, upstream=path))
    assert [pr.number for pr in result.prs] == [1, 2] and result.tip == up.head()
    assert any("origin/main" in n for n in result.notes)


def test_an_explicit_tip_is_used_as_given(clone: tuple[Repo, Path, str]) -> None:
    up, path, base = clone
    cfg = Config(upstream_branch="main", upstream_pin=UpstreamPin(synced=base))
    result = walk(workspace(cfg, upstream=path, range_=f"{base}..main"))
    assert [pr.number for pr in result.prs] == [1] and not result.notes
    assert configured_tip(path, "origin/main") == ("origin/main", None)


def test_a_local_branch_ahead_or_level_is_the_tip(clone: tuple[Repo, Path, str]) -> None:
    up, path, _ = clone
    git.run(path, ["merge", "-q", "--ff-only", "origin/main"])
    assert configured_tip(path, "main") == ("main", None)
    Repo(path).commit("local work", {"d.py": "d = 1\n"})
    assert configured_tip(path, "main") == ("main", None)


def test_diverged_branches_are_refused_with_both_shas(clone: tuple[Repo, Path, str]) -> None:
    up, path, _ = clone
    local = Repo(path).commit("local only", {"e.py": "e = 1\n"})
    with pytest.raises(BadInput) as exc:
        configured_tip(path, "main")
    assert local in exc.value.message and up.head() in exc.value.message
    assert exc.value.hint is not None and 'branch = "origin/main"' in exc.value.hint


def test_a_bare_mirror_has_no_remote_tracking_branch(clone: tuple[Repo, Path, str], tmp_path: Path) -> None:
    up, _, _ = clone
    git.run(tmp_path, ["clone", "-q", "--mirror", str(up.path), str(tmp_path / "m.git")])
    assert configured_tip(tmp_path / "m.git", "main") == ("main", None)
