"""Git objects: ids and modes, trees (:func:`ls_tree`) and blobs (:class:`CatFile`,
:func:`cat_blobs`, both over ``git cat-file --batch``), and :func:`blob_oid` without a process."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vimesync.errors import GitError
from vimesync.git.disarm import argv, git_env
from vimesync.git.process import run
from vimesync.git.repocheck import guard
from vimesync.git.repos import object_store

NULL_SHA = "0" * 40  # git's "no object": a root commit's base, a deleted file's oid

# Tree entry modes as git writes them (ls-tree, diff headers); one set for sources and patches.
MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000  # a symlink: its bytes are its target
MODE_DIR = 0o040000
MODE_GITLINK = 0o160000  # a submodule; what git calls a directory found where a file was expected


def blob_oid(data: bytes) -> str:
    """The git blob id of ``data``, as ``git hash-object`` computes it (no git process: sha1 of
    ``"blob <size>\\0" + data``, fed in two parts so a large content is never copied)."""
    import hashlib  # here: a walk hashes no blob, and _hashlib costs a few ms to load

    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


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
    """Every blob (and submodule) under ``rev``, or under ``paths`` of it. A whole tree named by a
    full sha is listed once per process (its last few kept): a sync's replay and its audit both
    list the baseline."""
    args = ["ls-tree", "-r", "-z", "--long", "--full-tree", rev]
    if paths:
        args += ["--", *paths]
        return parse_ls_tree(run(repo, args))
    key = (object_store(repo), rev)
    if (known := _LISTED.get(key)) is None:
        known = tuple(parse_ls_tree(run(repo, args)))
        if _FULL_SHA.fullmatch(rev):
            _LISTED[key] = known
            while len(_LISTED) > _LISTINGS_KEPT:
                del _LISTED[next(iter(_LISTED))]
    return list(known)


_LISTINGS_KEPT = 8
_LISTED: dict[tuple[str, str], tuple[TreeEntry, ...]] = {}
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def _cat_file_batch(repo: Path, mode: str = "--batch") -> subprocess.Popen[bytes]:
    """``git cat-file --batch`` (or ``--batch-check``) in ``repo``, guarded like every call:
    requests on stdin."""
    guard(repo, ["cat-file"], None)
    return subprocess.Popen(
        argv(["cat-file", mode]),
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(),
    )


class CatFile:
    """A long-lived ``git cat-file --batch`` for reading many blobs through one process."""

    def __init__(self, repo: Path) -> None:
        self._proc = _cat_file_batch(repo)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self.repo = repo
        self._check: subprocess.Popen[bytes] | None = None  # --batch-check, started on first use

    def size(self, oid: str) -> int:
        """The object's size in bytes, read without its content (``git cat-file --batch-check``)."""
        if self._check is None:
            self._check = _cat_file_batch(self.repo, "--batch-check")
        assert self._check.stdin is not None and self._check.stdout is not None
        self._check.stdin.write(oid.encode() + b"\n")
        self._check.stdin.flush()
        header = self._check.stdout.readline()
        if header.endswith(b" missing\n") or not header:
            raise GitError(f"{self.repo}: object {oid} is missing")
        return int(header.split()[2])

    def lookup(self, name: str) -> tuple[str, str] | None:
        """``(oid, type)`` of the object ``name`` names (any revision, ``<commit>:<folder>`` too;
        symlinks in it are not followed), None when there is none."""
        if "\n" in name:
            raise GitError("an object name with a line break")
        if self._check is None:
            self._check = _cat_file_batch(self.repo, "--batch-check")
        assert self._check.stdin is not None and self._check.stdout is not None
        self._check.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self._check.stdin.flush()
        fields = self._check.stdout.readline().split()
        if len(fields) != 3 or not fields[2].isdigit():
            return None  # "<name> missing", "ambiguous"
        return fields[0].decode("ascii"), fields[1].decode("ascii")

    def blob(self, name: str, *, max_size: int | None = None) -> bytes | None:
        """The content of the blob ``name`` names (``<commit>:<path>``: the path as the tree holds
        it, no symlink followed) through this one process; None when it names nothing or no blob.
        GitError for a blob larger than ``max_size``."""
        if "\n" in name:
            return None
        self._in.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self._in.flush()
        fields = self._out.readline().split()
        if len(fields) != 3 or not fields[2].isdigit():
            return None  # "<name> missing", "<name> ambiguous"
        size = int(fields[2])
        if fields[1] != b"blob" or (max_size is not None and size > max_size):
            self._skip(size + 1)
            if fields[1] != b"blob":
                return None
            raise GitError(f"{self.repo}: {name} is {size:,} bytes, more than the {max_size:,} allowed")
        data = self._out.read(size)
        self._skip(1)
        return data

    def read(self, oid: str, *, max_size: int | None = None, head: int | None = None) -> bytes:
        """The object's content. With ``max_size``: GitError (bad input) for a larger object; with
        ``head``: its first ``head`` bytes only. What is not returned is skipped in chunks, never held."""
        self._in.write(oid.encode() + b"\n")
        self._in.flush()
        header = self._out.readline()
        if header.endswith(b" missing\n") or not header:
            raise GitError(f"{self.repo}: object {oid} is missing")
        size = int(header.split()[2])
        if max_size is not None and size > max_size:
            self._skip(size + 1)  # the content and its LF
            raise GitError(f"{self.repo}: object {oid} is {size:,} bytes, more than the {max_size:,} allowed")
        keep = size if head is None else min(size, head)
        data = self._out.read(keep)
        self._skip(size - keep + 1)  # the rest, and the LF after each object
        return data

    def _skip(self, left: int) -> None:
        while left > 0:
            chunk = self._out.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)

    def close(self) -> None:
        for proc in (self._proc, self._check):
            if proc is None:
                continue
            if proc.poll() is None:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> CatFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_tree(data: bytes, oid_bytes: int) -> dict[str, tuple[int, str]]:
    """A tree object's entries (``git cat-file tree``'s raw form: ``<mode> <name>\\0<binary id>``
    each) as ``{name: (mode, oid)}``; ``oid_bytes`` is 20 (SHA-1) or 32 (SHA-256)."""
    out: dict[str, tuple[int, str]] = {}
    at = 0
    while at < len(data):
        space, nul = data.find(b" ", at), data.find(b"\0", at)
        oid = data[nul + 1 : nul + 1 + oid_bytes]
        mode = data[at:space]
        if not at < space < nul or len(oid) != oid_bytes or mode.strip(b"01234567"):
            raise GitError("a tree object that does not parse")
        out[data[space + 1 : nul].decode("utf-8", "surrogateescape")] = (int(mode, 8), oid.hex())
        at = nul + 1 + oid_bytes
    return out


def cat_blobs(repo: Path, oids: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """Yield ``(oid, content)`` for each oid, in order, through one ``git cat-file --batch``.

    Requests are written by a helper thread so that git never blocks on a full stdout pipe while
    we are still writing its stdin (the pipelined form of :class:`CatFile`, for thousands of blobs).
    """
    import threading

    if not oids:
        return
    proc = _cat_file_batch(repo)
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
