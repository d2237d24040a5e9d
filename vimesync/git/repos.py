"""Which repository a path is in (:func:`git_dir`, :func:`common_dir`, :func:`is_repo`,
:func:`repo_at`), what a revision names there (:func:`resolve`, :func:`is_ancestor`), and which
tracked files its work tree or index holds otherwise than HEAD (:func:`modified_paths`)."""

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


# ``git status`` refreshes the index in memory (a file only touched is not modified), writes
# nothing (GIT_OPTIONAL_LOCKS=0), and with ``dirty`` reads a submodule's HEAD without running git
# in it (a submodule's own config is never inspected). Porcelain v1: paths from the root, stable.
_STATUS = (
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=no",
    "--no-renames",
    "--ignore-submodules=dirty",
)


def modified_paths(repo: Path) -> tuple[str, ...]:
    """The tracked paths (from the repository root, surrogate-escaped) whose index or work-tree
    content differs from HEAD: staged, modified, deleted or unmerged. Untracked files are not
    looked at. Through the disarmed git: no filter, hook or fsmonitor named by the repository runs
    (a filter driver is refused, git-lfs's switched off)."""
    return parse_status_z(run(repo, list(_STATUS)))


def parse_status_z(out: bytes) -> tuple[str, ...]:
    """The paths of ``git status --porcelain=v1 -z`` output (``XY PATH\\0``; a rename or copy,
    ``XY TO\\0FROM\\0``, gives both)."""
    fields = out.split(b"\0")
    paths: list[str] = []
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:].decode("utf-8", "surrogateescape"))
        if entry[:1] in (b"R", b"C") or entry[1:2] in (b"R", b"C"):
            paths.append(fields[i].decode("utf-8", "surrogateescape"))
            i += 1
    return tuple(dict.fromkeys(paths))
