"""The one place vimesync talks to git.

Every call runs ``git`` with an explicit ``cwd`` (or ``--git-dir``), a scrubbed environment
(no inherited GIT_* variables, no system/global config, no prompts, no optional locks) and
machine-readable (``-z``) output parsed by small pure helpers. Read paths never touch a
repository's work tree, index or refs. Nothing else in vimesync runs git directly.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vimesync.errors import GitError

NULL_SHA = "0" * 40

# Fixed identity for commits vimesync itself creates (demo, fixtures); callers may override.
DEFAULT_IDENTITY = {
    "GIT_AUTHOR_NAME": "vimesync",
    "GIT_AUTHOR_EMAIL": "vimesync@localhost",
    "GIT_COMMITTER_NAME": "vimesync",
    "GIT_COMMITTER_EMAIL": "vimesync@localhost",
}


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child gets: the caller's minus GIT_*, plus hermetic settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
            "LANG": "C",
        }
    )
    if extra:
        env.update(extra)
    return env


def _argv(repo: Path, args: Sequence[str]) -> list[str]:
    # safe.directory: read repositories owned by another user (CI caches, mirrors) without a global config.
    return ["git", "-c", "safe.directory=*", "-c", "core.quotepath=false", *args]


def run(
    repo: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> bytes:
    """Run ``git args`` in ``repo`` and return stdout. Raise GitError with git's message on failure."""
    try:
        proc = subprocess.run(
            _argv(repo, args),
            cwd=repo,
            input=input,
            capture_output=True,
            env=git_env(env),
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise GitError(f"{repo}: not a directory") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed"
        raise GitError(f"{repo}: git {args[0]}: {msg}")
    return proc.stdout


def run_status(
    cwd: Path, args: Sequence[str], *, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``git args`` in ``cwd``; return (exit code, stdout, stderr) without raising on failure."""
    try:
        proc = subprocess.run(_argv(cwd, args), cwd=cwd, capture_output=True, env=git_env(env), check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    return proc.returncode, proc.stdout, proc.stderr


def run_ok(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> bool:
    """True when ``git args`` exits 0 (for predicates such as ``merge-base --is-ancestor``)."""
    proc = subprocess.run(_argv(repo, args), cwd=repo, capture_output=True, env=git_env(env), check=False)
    return proc.returncode == 0


def stream(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> Iterator[bytes]:
    """Yield chunks of ``git args`` stdout as it runs (one process, for long logs)."""
    proc = subprocess.Popen(
        _argv(repo, args),
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(env),
    )
    assert proc.stdout is not None
    try:
        while chunk := proc.stdout.read(1 << 16):
            yield chunk
    finally:
        proc.stdout.close()
        err = proc.stderr.read() if proc.stderr else b""
        code = proc.wait()
        if proc.stderr:
            proc.stderr.close()
    if code != 0:
        msg = err.decode("utf-8", "replace").strip() or f"git {args[0]} failed"
        raise GitError(f"{repo}: git {args[0]}: {msg}")


# ---------------------------------------------------------------------------------------------
# Small queries


def git_dir(path: Path) -> Path:
    """The git directory of ``path`` (a work tree or a bare repository); GitError if it is not one."""
    if not path.exists():
        raise GitError(f"{path}: no such directory")
    if not path.is_dir():
        raise GitError(f"{path}: not a directory")
    try:
        out = run(path, ["rev-parse", "--absolute-git-dir"])
    except GitError as exc:
        raise GitError(f"{path}: not a git repository") from exc
    return Path(out.decode().strip())


def is_repo(path: Path) -> bool:
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
        raise GitError(f"{repo}: unknown revision {rev!r}")
    return sha


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    return run_ok(repo, ["merge-base", "--is-ancestor", ancestor, descendant])


@dataclass(frozen=True)
class TreeEntry:
    mode: int  # e.g. 0o100644, 0o100755, 0o120000 (symlink), 0o160000 (submodule)
    kind: str  # "blob", "tree", "commit"
    oid: str
    size: int  # -1 when git does not report one (submodules)
    path: str


def parse_ls_tree(out: bytes) -> list[TreeEntry]:
    """Parse ``git ls-tree -r -z --long`` output."""
    entries = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, oid, size = meta.split()
        entries.append(
            TreeEntry(
                mode=int(mode, 8),
                kind=kind.decode(),
                oid=oid.decode(),
                size=int(size) if size != b"-" else -1,
                path=path.decode("utf-8", "surrogateescape"),
            )
        )
    return entries


def ls_tree(repo: Path, rev: str, paths: Sequence[str] = ()) -> list[TreeEntry]:
    args = ["ls-tree", "-r", "-z", "--long", "--full-tree", rev]
    if paths:
        args += ["--", *paths]
    return parse_ls_tree(run(repo, args))


class CatFile:
    """A long-lived ``git cat-file --batch`` for reading many blobs through one process."""

    def __init__(self, repo: Path) -> None:
        self._proc = subprocess.Popen(
            _argv(repo, ["cat-file", "--batch"]),
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self.repo = repo

    def read(self, oid: str) -> bytes:
        self._in.write(oid.encode() + b"\n")
        self._in.flush()
        header = self._out.readline()
        if header.endswith(b" missing\n") or not header:
            raise GitError(f"{self.repo}: object {oid} is missing")
        size = int(header.split()[2])
        data = self._out.read(size)
        self._out.read(1)  # the LF after each object
        return data

    def close(self) -> None:
        if self._proc.poll() is None:
            self._in.close()
            self._proc.wait()
        self._out.close()

    def __enter__(self) -> CatFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# Reading a pinned source through git objects


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
    out = subprocess.run(
        _argv(path, ["rev-parse", "--absolute-git-dir", "--is-bare-repository", "--show-cdup"]),
        cwd=path,
        capture_output=True,
        env=git_env(extra),
        check=False,
    )
    if out.returncode != 0:
        return None
    lines = out.stdout.decode("utf-8", "surrogateescape").splitlines()
    gitdir = Path(lines[0])
    bare = len(lines) > 1 and lines[1] == "true"
    # --show-cdup is empty at a work tree root; a bare repo must be the path itself (not e.g. path/refs).
    if bare:
        return gitdir if gitdir.resolve() == path.resolve() else None
    cdup = lines[2] if len(lines) > 2 else ""
    return gitdir if cdup == "" else None


def cat_blobs(repo: Path, oids: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """Yield ``(oid, content)`` for each oid, in order, through one ``git cat-file --batch``.

    Requests are written by a helper thread so that git never blocks on a full stdout pipe while
    we are still writing its stdin (the pipelined form of :class:`CatFile`, for thousands of blobs).
    """
    import threading

    if not oids:
        return
    proc = subprocess.Popen(
        _argv(repo, ["cat-file", "--batch"]),
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def feed() -> None:
        try:
            stdin.write(b"".join(oid.encode() + b"\n" for oid in oids))
            stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass  # git died or we stopped reading; the reader reports it

    writer = threading.Thread(target=feed, name="cat-blobs", daemon=True)
    writer.start()
    try:
        for oid in oids:
            header = stdout.readline()
            if not header or header.endswith(b" missing\n"):
                raise GitError(f"{repo}: object {oid} is missing")
            size = int(header.split()[2])
            data = stdout.read(size)
            if len(data) != size:
                raise GitError(f"{repo}: git cat-file ended early reading {oid}")
            stdout.read(1)  # the LF after each object
            yield oid, data
    finally:
        stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        writer.join(timeout=5)
