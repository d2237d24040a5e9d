"""What vimesync/git keeps for the process (issue 30: one sync asked git the same questions many
times) is only what cannot change: a full sha, the ancestry of two, a whole tree by its sha. A
ref is asked again; a repository's common dir, git dir and whether a folder is one are asked
again when the folder's ``.git`` or the config is not the one they were found under; and a config
written since is inspected again before git runs (a hostile one is refused, as before)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync import git


def test_a_ref_is_resolved_again_after_it_moves(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    first = repo.commit("one", {"a": "1"})
    assert git.resolve(repo.path, "HEAD") == first
    assert git.resolve(repo.path, first) == first  # kept
    second = repo.commit("two", {"a": "2"})
    assert git.resolve(repo.path, "HEAD") == second
    assert git.is_ancestor(repo.path, first, second) and not git.is_ancestor(repo.path, second, first)
    assert git.is_ancestor(repo.path, "HEAD~1", "HEAD")
    with pytest.raises(git.GitError, match="unknown revision"):
        git.resolve(repo.path, "0" * 40)
    with pytest.raises(git.GitError, match="unknown revision"):
        git.resolve(repo.path, "0" * 40)  # an unknown sha is never kept


def test_a_whole_tree_listed_once_is_the_same_list_each_time(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    sha = repo.commit("one", {"a": "1", "d/b": "2"})
    first = git.ls_tree(repo.path, sha)
    first.clear()  # a caller's list is its own
    again = git.ls_tree(repo.path, sha)
    assert [e.path for e in again] == ["a", "d/b"]
    assert [e.path for e in git.ls_tree(repo.path, sha, ["d"])] == ["d/b"]


def test_a_worktree_replaced_by_a_repository_has_its_own_common_dir(tmp_path: Path) -> None:
    main = Repo(tmp_path / "main")
    main.commit("one", {"a": "1"})
    wt = tmp_path / "wt"
    main.git("worktree", "add", "-q", "-b", "side", str(wt))
    assert git.common_dir(wt) == (main.path / ".git").resolve()
    main.git("worktree", "remove", "--force", str(wt))
    other = Repo(wt)
    assert git.common_dir(other.path) == (wt / ".git").resolve()
    assert git.git_dir(other.path) == (wt / ".git").resolve()


def test_a_folder_made_a_repository_is_one(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    assert git.repo_at(folder) is None
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    assert git.repo_at(folder) == (folder / ".git").resolve()


def test_a_config_written_after_the_check_is_checked_again(tmp_path: Path) -> None:
    """Inspected once (with and without a ceiling), then given a command to run: refused."""
    repo = Repo(tmp_path / "r")
    sha = repo.commit("one", {"a": "1"})
    assert git.repo_at(repo.path) is not None and git.resolve(repo.path, sha) == sha
    with (repo.path / ".git" / "config").open("a") as f:
        f.write('[filter "x"]\n\tclean = touch pwned\n')
    for ask in (
        lambda: git.repo_at(repo.path),
        lambda: git.git_dir(repo.path),
        lambda: git.ls_tree(repo.path, sha),
    ):
        with pytest.raises(git.GitError, match="refusing a repository"):
            ask()
    assert not (repo.path / "pwned").exists()


def test_a_worktree_file_replaced_by_a_folder_of_the_same_inode_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file system may give a new ``.git`` folder the inode number of the ``.git`` file it
    replaced: the kind tells them apart (here the inode is made equal on purpose)."""
    main = Repo(tmp_path / "main")
    main.commit("one", {"a": "1"})
    wt = tmp_path / "wt"
    main.git("worktree", "add", "-q", "-b", "side", str(wt))
    assert git.common_dir(wt) == (main.path / ".git").resolve()
    inode = os.stat(wt / ".git").st_ino
    main.git("worktree", "remove", "--force", str(wt))
    other = Repo(wt)
    real = os.stat

    def same_inode(path: object, *args: object, **kw: object) -> os.stat_result:
        st = real(path, *args, **kw)  # type: ignore[arg-type]
        if Path(str(path)) == wt / ".git":
            return os.stat_result((st.st_mode, inode, *tuple(st)[2:]))
        return st

    monkeypatch.setattr(os, "stat", same_inode)
    assert git.common_dir(other.path) == (wt / ".git").resolve()


def test_a_folder_with_no_git_entry_is_no_repository_without_asking_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unpacked wheel has neither ``.git`` nor ``HEAD``: git could find nothing there under the
    ceiling, so none is started. A bare repository (``HEAD``) and a worktree (a ``.git`` file) are
    still asked about, and found."""
    plain = tmp_path / "wheel"
    (plain / "pkg").mkdir(parents=True)
    (plain / "pkg" / "HEAD").write_text("not at the top\n")
    bare, main, wt = tmp_path / "bare.git", Repo(tmp_path / "main"), tmp_path / "wt"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    main.commit("one", {"a": "1"})
    main.git("worktree", "add", "-q", "-b", "side", str(wt))

    import vimesync.git.repos as repos

    started: list[object] = []
    real = repos.capture
    monkeypatch.setattr(repos, "capture", lambda *a, **k: started.append(a) or real(*a, **k))
    assert git.repo_at(plain) is None and started == []
    assert git.repo_at(bare) == bare.resolve() and started
    assert git.repo_at(wt) is not None
