"""Which repository a path is in (:func:`git_dir`, :func:`common_dir`, :func:`is_repo`,
:func:`repo_at`), what a revision names there (:func:`resolve`, :func:`is_ancestor`), and which
tracked files its work tree or index holds otherwise than HEAD (:func:`modified_paths`)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from vimesync.errors import GitError
from vimesync.git.disarm import argv, git_env
from vimesync.git.process import run, run_ok
from vimesync.git.repocheck import guard, inspect_repository, inspected_common_dir, inspected_git_dir
from vimesync.procrun import Command, capture


def git_dir(path: Path) -> Path:
    """The git directory of ``path`` (a work tree or a bare repository); GitError if it is not one."""
    if not path.exists():
        raise GitError(f"{path}: no such directory")
    if not path.is_dir():
        raise GitError(f"{path}: not a directory")
    inspect_repository(path)  # a refused repository says why, not "not a git repository"
    if (found := inspected_git_dir(path)) is not None:  # the inspection asked git already
        return found
    try:
        out = run(path, ["rev-parse", "--absolute-git-dir"])
    except GitError as exc:
        raise GitError(f"{path}: not a git repository") from exc
    return Path(out.decode().strip())


# repository -> (its common git dir, the stamp it was found under): a sync saves its state after
# every step, and each save asked git again where the state file goes.
_COMMON: dict[str, tuple[Path, tuple[object, ...]]] = {}


def common_dir(repo: Path) -> Path:
    """The git directory every worktree of ``repo`` shares (where a state file is kept); asked of
    git again when ``repo/.git``, the common dir or its config is not the one it was found with."""
    seen = _COMMON.get(str(repo))
    if seen is not None and _stamp(repo, seen[0]) == seen[1]:
        return seen[0]
    out = run(repo, ["rev-parse", "--git-common-dir"]).decode().strip()
    found = (repo / out).resolve() if not os.path.isabs(out) else Path(out)
    _COMMON[str(repo)] = (found, _stamp(repo, found))
    return found


def _stamp(repo: Path, common: Path) -> tuple[object, ...]:
    """Which ``.git`` and which config: inode, device, kind, and the time of a file (a folder's
    time moves with every file written in it). The kind and time matter: a worktree's ``.git``
    file removed and a repository made in its place may get the same inode number back."""

    def one(path: Path, *, when: bool) -> object:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        kind = stat.S_IFMT(st.st_mode)
        return (st.st_ino, st.st_dev, kind, st.st_mtime_ns if when or kind != stat.S_IFDIR else 0)

    return (one(repo / ".git", when=False), one(common, when=False), one(common / "config", when=True))


def is_repo(path: Path) -> bool:
    """True when ``path`` is in a repository git would read (see :func:`git_dir`)."""
    try:
        git_dir(path)
    except GitError:
        return False
    return True


def object_store(repo: Path) -> str:
    """What holds ``repo``'s objects, as a key for facts about them: its common git dir when the
    repository check found it (the worktrees of one repository share it), else the path."""
    return str(inspected_common_dir(repo) or repo)


# (repository, full sha, kind) that resolved to itself: an object does not go away while a command
# runs, so a sha a step resolved is not asked of git again by the steps after it (a ref is).
_RESOLVED: set[tuple[str, str, str]] = set()
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def resolve(repo: Path, rev: str, *, kind: str = "commit") -> str:
    """The full sha of ``rev`` peeled to ``kind``; GitError naming the rev when unknown."""
    if not rev or rev.startswith("-"):
        raise GitError(f"{repo}: {rev!r} is not a revision")
    known = (object_store(repo), rev, kind)
    if known in _RESOLVED:
        return rev
    out = run(
        repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{{kind}}}"], check=False
    )
    sha = out.decode().strip()
    if len(sha) != 40:
        if not is_repo(repo):  # say that, not "unknown revision 'HEAD'" (run in /tmp, say)
            raise GitError(f"{repo}: not a git repository")
        raise GitError(f"{repo}: unknown revision {rev!r}")
    if sha == rev and _FULL_SHA.fullmatch(rev):
        _RESOLVED.add(known)
    return sha


# (repository, ancestor, descendant) of full shas -> the answer: commits do not change, so a pair
# one step asked about (the audit's baseline and head, the walk's range) is not asked again.
_ANCESTRY: dict[tuple[str, str, str], bool] = {}


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    key = (object_store(repo), ancestor, descendant)
    if (known := _ANCESTRY.get(key)) is not None:
        return known
    answer = run_ok(repo, ["merge-base", "--is-ancestor", ancestor, descendant])
    if _FULL_SHA.fullmatch(ancestor) and _FULL_SHA.fullmatch(descendant):
        _ANCESTRY[key] = answer
    return answer


def repo_at(path: Path) -> Path | None:
    """The git directory when ``path`` itself is a repository (a work tree root or a bare repository).

    Unlike :func:`git_dir`, a directory *inside* some work tree is not a repository here: the
    discovery is stopped at ``path`` (GIT_CEILING_DIRECTORIES), so ``--source some/subdir`` is read
    as a plain directory rather than as the enclosing repository.
    """
    path = path.absolute()
    if not path.is_dir():
        return None
    if not os.path.lexists(path / ".git") and not os.path.lexists(path / "HEAD"):
        # Under this ceiling git looks at ``path/.git`` and at ``path`` as a bare repository, which
        # needs a HEAD: with neither there is nothing to find, and no git to start (an unpacked wheel).
        return None
    extra = {"GIT_CEILING_DIRECTORIES": str(path.parent)}
    guard(path, ["rev-parse"], extra)
    stamp = _where(path)
    seen = _REPO_AT.get(str(path))
    if seen is not None and seen[1] == stamp:
        return seen[0]
    found = _repo_at(path, extra)
    _REPO_AT[str(path)] = (found, stamp)
    return found


# path -> (repo_at's answer, the stamp it was found under): the engine's source is asked whether
# it is a repository by the check's plan and again by the source it opens.
_REPO_AT: dict[str, tuple[Path | None, tuple[object, ...]]] = {}


def _where(path: Path) -> tuple[object, ...]:
    """Which folder, ``.git``, ``HEAD`` and ``objects`` ``path`` holds (none made or replaced)."""

    def one(p: Path) -> object:
        try:
            st = os.stat(p, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_ino, st.st_dev)

    return tuple(one(path / name) for name in ("", ".git", "HEAD", "objects"))


def _repo_at(path: Path, extra: dict[str, str]) -> Path | None:
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
