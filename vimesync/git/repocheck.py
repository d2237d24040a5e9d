"""Refuse a repository whose config could make git run a command, before its first use.

Before the first command in a repository its config is listed (includes followed, as git itself
reads them) and the repository refused, naming the key (never its value), when a key is set that
the disarmed command line (:mod:`vimesync.git.disarm`) cannot neutralise: lazy fetch, filter and
merge drivers, a work tree elsewhere, alternates outside the git dir (the table in
:mod:`vimesync.git`). The verdict is cached per git directory for the process. ``init`` and
``clone`` create repositories and are not inspected (their target is ours).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from vimesync.errors import GitError
from vimesync.git.disarm import CREATING, SAFE_ARGV, command, git_env, message, refuse_nul
from vimesync.procrun import Command, ProcessRun, capture

_PARTIAL = re.compile(r"^(extensions\.partialclone|remote\..+\.(promisor|partialclonefilter))$")
_DRIVER_COMMAND = re.compile(r"^(filter\..+\.(clean|smudge|process)|merge\..+\.driver)$")
# Verdicts: (cwd, ceiling) -> the git dir's common dir and a stamp of the files that decide; a
# repository whose config or alternates change (tests, the demo) is inspected again.
# What ``git lfs install --local`` (actions/checkout with lfs: true) writes: run only by commands
# that convert between work tree and objects, which vimesync never runs in such a repository.
_GIT_LFS = {
    "filter.lfs.clean": "git-lfs clean -- %f",
    "filter.lfs.smudge": "git-lfs smudge -- %f",
    "filter.lfs.process": "git-lfs filter-process",
}
_checked: dict[tuple[str, str], tuple[Path, tuple[object, ...]]] = {}


def refused_key(key: str, value: str | None, *, git_dir: Path, cwd: Path) -> str | None:
    """Why ``key`` (as ``git config --list`` names it) makes a repository unusable, or None."""
    name = key.lower() if key.count(".") < 2 else _fold(key)
    if _PARTIAL.match(name):
        return "lazy fetching (a partial clone) runs commands to fetch missing objects"
    if _DRIVER_COMMAND.match(name) and _GIT_LFS.get(name) != value:
        return "it names a command git would run"
    if name == "core.worktree" and value is not None:
        tree = (git_dir / value).resolve()
        here = cwd.resolve()
        if tree != here and tree not in here.parents:
            return "it points the work tree outside the repository"
    return None


def _fold(key: str) -> str:
    # Section and variable names are case-insensitive, the subsection in between is not.
    section, _, rest = key.partition(".")
    sub, _, var = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{var.lower()}"


def parse_config_list(out: bytes) -> Iterator[tuple[str, str, str | None]]:
    """(scope, key, value or None) from ``git config --list -z --show-scope``."""
    toks = out.split(b"\0")
    for scope, entry in zip(toks[0::2], toks[1::2], strict=False):
        key, nl, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        yield scope.decode(), key, value if nl else None


def _outside_alternate(objects: Path, root: Path, depth: int = 0) -> Path | None:
    """The first alternate object store (followed as git does, 5 deep) outside ``root``."""
    try:
        lines = (objects / "info" / "alternates").read_bytes().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return None
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        alt = (objects / line.strip()).resolve()
        if not alt.is_relative_to(root):
            return alt
        if depth < 5 and (deeper := _outside_alternate(alt, root, depth + 1)) is not None:
            return deeper
    return None


def inspect_repository(cwd: Path, extra: dict[str, str] | None = None) -> None:
    """GitError naming the repository and the key when its config could make git run a command
    (see the module docstring); nothing when ``cwd`` is not in a repository. Cached per git dir."""
    slot = (str(cwd), (extra or {}).get("GIT_CEILING_DIRECTORIES", ""))
    if (seen := _checked.get(slot)) is not None and _stamp(seen[0]) == seen[1]:
        return
    if (same := _found_here(cwd)) is not None:  # at its own root: no ceiling changes what git finds
        _checked[slot], _git_dirs[slot] = same
        return
    env = git_env(extra)

    def query(args: list[str]) -> ProcessRun:
        return capture(Command([*SAFE_ARGV, *args], cwd, env))

    try:
        dirs = query(["rev-parse", "--absolute-git-dir", "--git-common-dir"])
    except (FileNotFoundError, NotADirectoryError):
        return  # the command itself says what is wrong
    if dirs.code != 0:
        return  # not a repository (yet): nothing to inspect
    lines = dirs.output.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) < 2:
        return
    git_dir, common = Path(lines[0]), (cwd / lines[1]).resolve()
    stamp = _stamp(common)
    if not any(c == common and s == stamp for c, s in _checked.values()):
        listed = query(["config", "--list", "-z", "--show-scope"])
        if listed.code != 0:
            raise GitError(message(cwd, ["config"], listed.stderr))
        for scope, key, value in parse_config_list(listed.output):
            if scope == "command":
                continue
            why = refused_key(key, value, git_dir=git_dir, cwd=cwd)
            if why:
                raise GitError(
                    f"{cwd}: refusing a repository that sets {ascii(key[:200])}: {why}",
                    hint="vimesync runs no command a repository names; use a plain clone or mirror",
                )
        alt = _outside_alternate(common / "objects", common)
        if alt is not None:
            raise GitError(
                f"{cwd}: refusing a repository whose objects/info/alternates points outside it",
                hint="use a clone that holds its own objects (git repack -a -d, then remove the file)",
            )
    _checked[slot] = (common, stamp)
    _git_dirs[slot] = git_dir


# the folder -> its git directory, as the inspection found it (git_dir asks no second time)
_git_dirs: dict[tuple[str, str], Path] = {}


def _found_here(cwd: Path) -> tuple[tuple[Path, tuple[object, ...]], Path] | None:
    """An inspection of ``cwd`` under another ceiling that found the repository at ``cwd`` itself
    (``cwd/.git``, or ``cwd`` a bare repository) and still holds."""
    for (where, _), seen in list(_checked.items()):
        if where != str(cwd):
            continue
        found = _git_dirs.get((where, _))
        if found is not None and found in (cwd / ".git", cwd) and _stamp(seen[0]) == seen[1]:
            return seen, found
    return None


def inspected_common_dir(cwd: Path) -> Path | None:
    """The common git directory of ``cwd`` as :func:`inspect_repository` found it (worktrees of one
    repository share it, and their objects), when that inspection still holds."""
    slot = (str(cwd), "")
    seen = _checked.get(slot)
    if seen is None or _stamp(seen[0]) != seen[1]:
        return None
    return seen[0]


def inspected_git_dir(cwd: Path) -> Path | None:
    """The absolute git directory of ``cwd`` as :func:`inspect_repository` found it, when that
    inspection still holds (None: not inspected, not a repository, or changed since)."""
    slot = (str(cwd), "")
    seen, found = _checked.get(slot), _git_dirs.get(slot)
    if seen is None or found is None or _stamp(seen[0]) != seen[1] or not found.is_dir():
        return None
    return found


def _stamp(common: Path) -> tuple[object, ...]:
    def one(path: Path) -> object:
        try:
            st = path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    return (one(common / "config"), one(common / "config.worktree"), one(common / "objects/info/alternates"))


def guard(cwd: Path, args: Sequence[str], extra: dict[str, str] | None) -> None:
    refuse_nul(cwd, args)
    if command(args) not in CREATING:
        inspect_repository(cwd, extra)
