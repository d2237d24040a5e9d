"""Which repository a path is in (:func:`git_dir`, :func:`common_dir`, :func:`is_repo`,
:func:`repo_at`) and what a revision names there (:func:`resolve`, :func:`is_ancestor`)."""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.errors import GitError
from vimesync.git.disarm import argv, git_env
from vimesync.git.process import run, run_ok
from vimesync.git.repocheck import guard, inspect_repository
from vimesync.procrun import Command, capture


def git_dir(path: Path) -> Path:
    """The git directory of ``path`` (a work tree or a bare repository); GitError if it is not one."""
    if not path.exists():
        raise GitError(f"{path}: no such directory")
    if not path.is_dir():
        raise GitError(f"{path}: not a directory")
    inspect_repository(path)  # a refused repository says why, not "not a git repository"
    try:
        out = run(path, ["rev-parse", "--absolute-git-dir"])
    except GitError as exc:
        raise GitError(f"{path}: not a git repository") from exc
    return Path(out.decode().strip())


def common_dir(repo: Path) -> Path:
    """The git directory every worktree of ``repo`` shares (where a state file is kept)."""
    out = run(repo, ["rev-parse", "--git-common-dir"]).decode().strip()
    return (repo / out).resolve() if not os.path.isabs(out) else Path(out)


def is_repo(path: Path) -> bool:
    """True when ``path`` is in a repository git would read (see :func:`git_dir`)."""
    try:
        git_dir(path)
    except GitError:
        return False
    return True


def resolve(repo: Path, rev: str, *, kind: str = "commit") -> str:
    """The full sha of ``rev`` peeled to ``kind``; GitError naming the rev when unknown."""
    if not rev or rev.startswith("-"):
        raise GitError(f"{repo}: {rev!r} is not a revision")
    out = run(
        repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{{kind}}}"], check=False
    )
    sha = out.decode().strip()
    if len(sha) != 40:
        if not is_repo(repo):  # say that, not "unknown revision 'HEAD'" (run in /tmp, say)
            raise GitError(f"{repo}: not a git repository")
        raise GitError(f"{repo}: unknown revision {rev!r}")
    return sha


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    return run_ok(repo, ["merge-base", "--is-ancestor", ancestor, descendant])


def repo_at(path: Path) -> Path | None:
    """The git directory when ``path`` itself is a repository (a work tree root or a bare repository).

    Unlike :func:`git_dir`, a directory *inside* some work tree is not a repository here: the
    discovery is stopped at ``path`` (GIT_CEILING_DIRECTORIES), so ``--source some/subdir`` is read
    as a plain directory rather than as the enclosing repository.
    """
    path = path.absolute()
    if not path.is_dir():
        return None
    extra = {"GIT_CEILING_DIRECTORIES": str(path.parent)}
    guard(path, ["rev-parse"], extra)
    args = ["rev-parse", "--absolute-git-dir", "--is-bare-repository", "--show-cdup"]
    out = capture(Command(argv(args), path, git_env(extra)))
    if out.code != 0:
        return None
    # Split on LF only: splitlines() also splits at a CR, which a folder name may hold.
    lines = out.output.decode("utf-8", "surrogateescape").split("\n")
    gitdir = Path(lines[0])
    bare = len(lines) > 1 and lines[1] == "true"
    # --show-cdup is empty at a work tree root; a bare repo must be the path itself (not e.g. path/refs).
    if bare:
        return gitdir if gitdir.resolve() == path.resolve() else None
    cdup = lines[2] if len(lines) > 2 else ""
    return gitdir if cdup == "" else None
