"""The plan of a parse: each ``*.py`` input's content key, what the cache already says of it, and
what is left to parse (one path per content, largest first). :func:`vimesync.pycheck.scan.parse_tree`
performs it.

Cache keys are git blob ids: free for files read from a git source (no read at all on a hit), and
computed with sha1 for anything else, so an untouched file hits the same entry whichever way the
tree was provided. A file parsed in place from disk whose (absolute path, size, mtime_ns, inode),
as its source listed it (``PyFile.stat``), the cache already knows (and that passes the racy-git
rule, see ``cache``) is not even read: its blob id comes from the cache.

A cold run (no cache, or none of its results made with this interpreter and grammar) could hit
nothing by content, so its files on disk are not read here at all: they are left *unkeyed*, and
the workers read, key and compile them in parallel (a keyed file job), while this process only
hands out paths.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vimesync.git import blob_oid
from vimesync.pycheck.cache import Cached, ParseCache
from vimesync.pycheck.model import ParseFailure, PyFile, StatKey

# Bytes of files read only to be hashed (zip members) that are kept for parsing; the rest are
# read again when parsed, so 300 members of 9.9 MiB never sit in memory at once.
MAX_HELD = 256 << 20

Loader = Callable[[list[str]], Iterable[tuple[str, bytes]]]  # paths -> (path, bytes) in the same order
FileInput = PyFile | tuple[str, bytes | Path]


def _as_pyfile(item: FileInput) -> PyFile:
    if isinstance(item, PyFile):
        return item
    path, content = item
    if isinstance(content, bytes):
        return PyFile(path=path, size=len(content), data=content)
    return PyFile(path=path, file=Path(content))


def _too_large(size: int, cap: int) -> str:
    return f"file too large to parse ({size / (1 << 20):.1f} MiB > {cap / (1 << 20):g} MiB cap)"


def read_file(f: PyFile, cap: int) -> bytes | str:
    """The bytes of an on-disk input, or a failure message (see :func:`read_file_stat`)."""
    got = read_file_stat(f, cap)
    return got if isinstance(got, str) else got[0]


def read_file_stat(f: PyFile, cap: int) -> tuple[bytes, StatKey] | str:
    """The bytes of an on-disk input and its stat key, or a failure message. Regular files only:
    the last component is never followed (the callers give paths they listed without following
    any symlink), and a FIFO or device is never waited on or read."""
    assert f.file is not None
    try:
        fd = os.open(f.file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    try:  # plain descriptor reads: a file object per file costs more than the read, thousands of times
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "cannot read file: not a regular file"
        if 0 <= cap < st.st_size:
            return _too_large(st.st_size, cap)
        want = st.st_size + 1 if cap < 0 else min(st.st_size, cap) + 1  # +1: sees a file that grew
        parts = [os.read(fd, want)]
        while parts[-1] and (cap < 0 or sum(map(len, parts)) <= cap):
            parts.append(os.read(fd, 1 << 20))
        data = b"".join(parts) if len(parts) > 2 else parts[0]
        return data, StatKey(st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    finally:
        os.close(fd)


@dataclass
class ParseInputs:
    """What the plan learns of each input: its bytes when read, its content key, its failure."""

    by_path: dict[str, PyFile]
    cap: int
    failures: dict[str, ParseFailure] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)  # in memory (given, or read to be hashed)
    keys: dict[str, str] = field(default_factory=dict)  # path -> content key
    by_stat: list[str] = field(default_factory=list)  # keyed by their lstat record, unread
    # On disk, unread and unkeyed (a cold run): the worker that parses one keys it. Each maps to
    # the absolute path its stat is recorded under, or None (a scratch copy: nothing to record).
    unkeyed: dict[str, bytes | None] = field(default_factory=dict)
    hits: dict[str, Cached] = field(default_factory=dict)  # content key -> outcome, found with a stat

    def fail(self, path: str, message: str) -> None:
        self.failures[path] = ParseFailure(path, None, message)
        self.keys.pop(path, None)

    def key(self, path: str, content: bytes) -> bool:
        """Key ``path`` by ``content`` (False, and a failure, when it is over the cap)."""
        if len(content) > self.cap:
            self.fail(path, _too_large(len(content), self.cap))
            return False
        self.keys[path] = blob_oid(content)
        return True


@dataclass(frozen=True)
class ParsePlan:
    """What is left to parse: one path per content not in the cache (largest first), and who
    shares each content; what the cache answered."""

    inputs: ParseInputs
    env: str  # the cache's name for the interpreter and worker
    hits: dict[str, Cached]
    same: dict[str, list[str]]  # content key -> its paths, for the contents to parse
    misses: list[str]  # one path per content to parse, and every unkeyed path; largest first
    total: int  # *.py files
    cached: int  # answered by the cache


def plan_parse(
    files: Iterable[FileInput],
    env: str,
    cache: ParseCache | None,
    loader: Loader | None,
    cap: int,
    *,
    cold: bool | None = None,
    first: Sequence[str] = (),
) -> ParsePlan:
    """Each ``*.py`` input keyed by its content (read and hashed only where no key is known),
    looked up in ``cache`` under ``env``, the rest grouped by content. ``cold``: whether the
    cache holds nothing of ``env`` (None: ask it). ``first``: unkeyed files that lead the misses,
    in this order (already sent to the workers), whatever their size."""
    by_path: dict[str, PyFile] = {}
    for item in files:
        f = _as_pyfile(item)
        by_path[f.path] = f
    python = [f for path, f in by_path.items() if path.endswith(".py")]
    found = ParseInputs(by_path, cap)
    on_disk: list[PyFile] = []
    need_key: list[PyFile] = []
    for f in python:
        if 0 <= cap < f.size:
            found.fail(f.path, _too_large(f.size, cap))
        elif f.data is not None:
            found.data[f.path] = f.data
        elif f.oid is None and f.file is not None:
            on_disk.append(f)
        elif f.oid is None:
            need_key.append(f)
    if on_disk:
        cold = cold_cache(cache, env) if cold is None else cold
        _key_on_disk(found, on_disk, cache, env, cold=cold, sent=set(first))
    _key_loaded(found, need_key, loader)
    for f in python:  # the rest: given bytes, or a blob id their source knew
        if f.path in found.failures or f.path in found.keys or f.path in found.unkeyed:
            continue
        if f.path in found.data and len(found.data[f.path]) > cap:
            found.fail(f.path, _too_large(len(found.data[f.path]), cap))
        else:
            found.keys[f.path] = f.oid or blob_oid(found.data[f.path])
    hits = _lookup(found, cache, env)
    same: dict[str, list[str]] = {}  # identical contents (all those empty __init__.py) parse once
    for path, key in found.keys.items():
        hit = hits.get(key)
        if hit is None:
            same.setdefault(key, []).append(path)
        elif not hit.ok:
            found.failures[path] = ParseFailure(path, hit.line, hit.message or "", hit.column)
    firsts = [paths[0] for paths in same.values()]
    lead = [p for p in first if p in found.unkeyed]
    leading = set(lead)
    rest = [*firsts, *(p for p in found.unkeyed if p not in leading)]
    misses = lead + sorted(rest, key=lambda p: -_size(by_path[p], found.data))
    waiting = sum(map(len, same.values()))
    return ParsePlan(found, env, hits, same, misses, len(python), len(found.keys) - waiting)


def cold_cache(cache: ParseCache | None, env: str) -> bool:
    """Whether no file can hit the cache by its content: no cache, or no result of ``env`` in it."""
    return cache is None or not cache.enabled or not cache.has_results(env)


def _key_on_disk(
    found: ParseInputs,
    on_disk: list[PyFile],
    cache: ParseCache | None,
    env: str,
    *,
    cold: bool,
    sent: Collection[str] = (),
) -> None:
    """Files read in place: keyed by the cache's record of their lstat when it still holds (not
    read), else read and hashed, and their stat recorded for the next run; in a cold run, left
    unread and unkeyed for the worker that parses them (those ``sent`` to one already, always)."""
    keyed = cache is not None and cache.enabled
    where = {f.path: _abs(f.file) for f in on_disk if f.stat is not None and f.file} if keyed else {}
    now = {where[f.path]: f.stat for f in on_disk if f.path in where and f.stat is not None}
    known = cache.known(now, env) if cache is not None and now else {}
    stats: list[tuple[bytes, StatKey, str]] = []  # files read and hashed now, for the next run
    for f in on_disk:
        at = where.get(f.path)
        if f.path in sent:
            found.unkeyed[f.path] = at
            continue
        if at in known and now[at].size <= found.cap:
            oid, hit = known[at]
            found.keys[f.path] = oid  # unchanged since hashed: not read
            found.by_stat.append(f.path)
            if hit is not None:
                found.hits[oid] = hit
            continue
        if cold:
            found.unkeyed[f.path] = at
            continue
        got = read_file_stat(f, found.cap)
        if isinstance(got, str):
            found.fail(f.path, got)
            continue
        found.data[f.path] = got[0]
        if found.key(f.path, got[0]) and at is not None:
            stats.append((at, got[1], found.keys[f.path]))
    if cache is not None:
        cache.put_stats(stats)


def _abs(file: str | Path) -> bytes:
    path = os.fspath(file)
    return os.fsencode(path if os.path.isabs(path) else os.path.abspath(path))


def _key_loaded(found: ParseInputs, need_key: list[PyFile], loader: Loader | None) -> None:
    """Inputs only the loader can give (zip members): no hash without the bytes; those read are
    kept for parsing up to MAX_HELD bytes, the rest read again when parsed."""
    held = sum(map(len, found.data.values()))
    for batch in _batches(need_key, MAX_HELD):
        for path, content in load(loader, [f.path for f in batch]):
            if found.key(path, content) and held + len(content) <= MAX_HELD:
                found.data[path] = content
                held += len(content)


def _lookup(found: ParseInputs, cache: ParseCache | None, env: str) -> dict[str, Cached]:
    """The cache's answers for every key. A file known by its stat but never parsed by this
    interpreter is read now (never through a symlink, by us, not a worker) and keyed by what was
    read, in case it changed since the lstat."""
    if cache is None:
        return {}
    hits = dict(found.hits)
    hits.update(cache.get_many(env, set(found.keys.values()) - hits.keys()))
    unread = [path for path in found.by_stat if found.keys[path] not in hits]
    for path in unread:
        text = read_file(found.by_path[path], found.cap)
        if isinstance(text, str):
            found.fail(path, text)
        elif found.key(path, text):
            found.data[path] = text
    if unread:
        hits.update(cache.get_many(env, set(found.keys.values()) - hits.keys()))
    return hits


def _size(f: PyFile, data: dict[str, bytes]) -> int:
    return len(data[f.path]) if f.path in data else f.size


def _batches(files: list[PyFile], budget: int) -> Iterator[list[PyFile]]:
    """``files`` in order, in runs whose announced sizes add up to at most ``budget`` (a loader
    may read a whole run at once)."""
    run: list[PyFile] = []
    size = 0
    for f in files:
        if run and size + f.size > budget:
            yield run
            run, size = [], 0
        run.append(f)
        size += f.size
    if run:
        yield run


def load(loader: Loader | None, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    if not paths:
        return
    if loader is None:
        raise ValueError(f"no bytes, file or loader for {paths[0]!r}")
    for expected, (path, content) in zip(paths, loader(paths), strict=True):
        if path != expected:
            raise ValueError(f"loader returned {path!r}, expected {expected!r}")
        yield path, content
