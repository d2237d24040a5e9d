"""``parse_tree``: parse every ``*.py`` file of a (patched) tree with the target grammar, in parallel,
cached by content, and flag leftover conflict markers in the files the patch stack touched.

Only ``*.py`` files are parsed (the issue's contract: what the interpreter imports). ``*.pyi`` stubs
are read by type checkers, which accept a grammar of their own, so they are not judged here; they are
still scanned for conflict markers when touched.

Cache keys are git blob ids: free for files read from a git source (no read at all on a hit), and
computed with sha1 for anything else, so an untouched file hits the same entry whichever way the
tree was provided. A file parsed in place from disk whose (absolute path, size, mtime_ns, inode),
as its source listed it (``PyFile.stat``), the cache already knows (and that passes the racy-git
rule, see ``cache``) is not even read: its blob id comes from the cache.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path

from vimesync.git import blob_oid
from vimesync.pycheck.cache import Cached, ParseCache
from vimesync.pycheck.interp import Interpreter
from vimesync.pycheck.model import ConflictMarker, ParseFailure, ParseReport, PyFile, StatKey
from vimesync.pycheck.pool import DEFAULT_TIMEOUT, ParseJob, ParseOutcome, ParsePool
from vimesync.pycheck.target import Target

MAX_SIZE = 10 << 20  # bytes; larger files are reported, not parsed
# Bytes of files read only to be hashed (zip members) that are kept for parsing; the rest are
# read again when parsed, so 300 members of 9.9 MiB never sit in memory at once.
MAX_HELD = 256 << 20
# Bump when the worker's verdicts or messages change, so old cache entries stop matching
# (2: compiled to bytecode, so compiler-only errors fail).
WORKER_REV = 2

Loader = Callable[[list[str]], Iterable[tuple[str, bytes]]]  # paths -> (path, bytes) in the same order
Progress = Callable[[int, int], None]
FileInput = PyFile | tuple[str, bytes | Path]

# Git's markers are exactly seven characters at the start of a line, then a space or the line end.
# A lone "=======" is also a reStructuredText underline (docstrings), so it only counts in a file
# that has an opening or closing marker too.
_MARKER = re.compile(rb"^(?:<{7}|>{7}|\|{7})(?:[ \t][^\n]*)?\r?$|^={7}\r?$", re.MULTILINE)


def conflict_markers(path: str, data: bytes) -> list[ConflictMarker]:
    """Leftover merge conflict markers in one file (binary files, by git's NUL heuristic, have none)."""
    if b"\0" in data[:8000]:
        return []
    if b"<<<<<<<" not in data and b">>>>>>>" not in data and b"|||||||" not in data:
        return []  # no opening, closing or base marker can match (a C-speed scan, not a regex one)
    found = [(m.start(), m.group()) for m in _MARKER.finditer(data)]
    if not any(not text.startswith(b"=") for _, text in found):
        return []
    out = []
    for start, text in found:
        line = data.count(b"\n", 0, start) + 1
        out.append(ConflictMarker(path, line, text.rstrip(b"\r").decode("utf-8", "replace")[:200]))
    return out


def _as_pyfile(item: FileInput) -> PyFile:
    if isinstance(item, PyFile):
        return item
    path, content = item
    if isinstance(content, bytes):
        return PyFile(path=path, size=len(content), data=content)
    return PyFile(path=path, file=Path(content))


def _too_large(size: int, cap: int) -> str:
    return f"file too large to parse ({size / (1 << 20):.1f} MiB > {cap / (1 << 20):g} MiB cap)"


def _read(f: PyFile, cap: int) -> bytes | str:
    """The bytes of an on-disk input, or a failure message (see :func:`_read_stat`)."""
    got = _read_stat(f, cap)
    return got if isinstance(got, str) else got[0]


def _read_stat(f: PyFile, cap: int) -> tuple[bytes, StatKey] | str:
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


def _abs(file: str | Path) -> bytes:
    return os.fsencode(os.path.abspath(file))


def parse_tree(
    files: Iterable[FileInput],
    *,
    target: Target,
    interpreter: Interpreter,
    cache: ParseCache | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    touched: Collection[str] = (),
    loader: Loader | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_size: int = MAX_SIZE,
    mem_limit: int | None = None,
) -> ParseReport:
    """Parse every ``*.py`` among ``files`` and scan the ``touched`` ones for conflict markers.

    ``files`` are PyFile records or ``(relpath, bytes | Path)`` pairs; when a path appears twice the
    last one wins (pass the source's files, then the patched scratch files). Inputs with neither
    bytes nor a file are read through ``loader`` (e.g. ``GitSource.read_many``), only on a cache miss.
    Non-``*.py`` inputs are never parsed, only scanned when touched.
    """
    by_path: dict[str, PyFile] = {}
    for item in files:
        f = _as_pyfile(item)
        by_path[f.path] = f
    python = [f for path, f in by_path.items() if path.endswith(".py")]
    total = len(python)
    env = f"{interpreter.cache_id}/w{WORKER_REV}"
    failures: dict[str, ParseFailure] = {}
    data: dict[str, bytes] = {}  # bytes already in memory (given, or read to be hashed)
    keys: dict[str, str] = {}  # path -> content key
    need_key: list[PyFile] = []
    on_disk: list[PyFile] = []
    for f in python:
        if 0 <= max_size < f.size:
            failures[f.path] = ParseFailure(f.path, None, _too_large(f.size, max_size))
        elif f.data is not None:
            data[f.path] = f.data
        elif f.oid is None and f.file is not None:
            on_disk.append(f)
        elif f.oid is None:
            need_key.append(f)
    stats: list[tuple[bytes, StatKey, str]] = []  # files read and hashed now, for the next run
    by_stat: list[str] = []  # files whose key came from their lstat record, unread
    if on_disk:
        keyed = cache is not None and cache.enabled
        where = {f.path: _abs(f.file) for f in on_disk if f.stat is not None and f.file} if keyed else {}
        now = {where[f.path]: f.stat for f in on_disk if f.path in where and f.stat is not None}
        known = cache.known_oids(now) if cache is not None and now else {}
        for f in on_disk:
            at = where.get(f.path)
            if at in known and now[at].size <= max_size:
                keys[f.path] = known[at]  # unchanged since hashed: not read
                by_stat.append(f.path)
                continue
            got = _read_stat(f, max_size)
            if isinstance(got, str):
                failures[f.path] = ParseFailure(f.path, None, got)
                continue
            data[f.path] = got[0]
            if len(got[0]) <= max_size:  # else reported below
                keys[f.path] = blob_oid(got[0])
                if at is not None:
                    stats.append((at, got[1], keys[f.path]))
        if cache is not None:
            cache.put_stats(stats)
    held = sum(map(len, data.values()))
    for batch in _batches(need_key, MAX_HELD):  # e.g. zip members: no hash without the bytes
        for path, content in _load(loader, [f.path for f in batch]):
            if len(content) > max_size:
                failures[path] = ParseFailure(path, None, _too_large(len(content), max_size))
                continue
            keys[path] = blob_oid(content)
            if held + len(content) <= MAX_HELD:
                data[path] = content
                held += len(content)
    for f in python:
        if f.path in failures or f.path in keys:
            continue
        if f.path in data and len(data[f.path]) > max_size:
            failures[f.path] = ParseFailure(f.path, None, _too_large(len(data[f.path]), max_size))
            continue
        keys[f.path] = f.oid or blob_oid(data[f.path])

    hits = cache.get_many(env, set(keys.values())) if cache is not None else {}
    if any(keys[p] not in hits for p in by_stat):
        # Known by stat but never parsed by this interpreter: read now (never through a symlink,
        # by us, not a worker) and keyed by what was read, in case it changed since the lstat.
        for path in by_stat:
            if keys[path] in hits:
                continue
            text = _read(by_path[path], max_size)
            if isinstance(text, str):
                failures[path] = ParseFailure(path, None, text)
                del keys[path]
            elif len(text) > max_size:
                failures[path] = ParseFailure(path, None, _too_large(len(text), max_size))
                del keys[path]
            else:
                data[path] = text
                keys[path] = blob_oid(text)
        if cache is not None:
            hits.update(cache.get_many(env, set(keys.values()) - hits.keys()))
    for path, key in keys.items():
        hit = hits.get(key)
        if hit is not None and not hit.ok:
            failures[path] = ParseFailure(path, hit.line, hit.message or "", hit.column)
    same: dict[str, list[str]] = {}  # identical contents (all those empty __init__.py) parse once
    for path, key in keys.items():
        if key not in hits:
            same.setdefault(key, []).append(path)
    misses = [paths[0] for paths in same.values()]
    cached = len(keys) - sum(map(len, same.values()))
    done = total - sum(map(len, same.values()))
    if progress:
        progress(done, total)

    notes = [cache.note] if cache is not None and cache.note else []
    if misses:
        misses.sort(key=lambda p: -_size(by_path[p], data))  # largest first: balanced tail
        fresh: dict[str, Cached] = {}

        def on_result(ident: int, outcome: ParseOutcome) -> None:
            nonlocal done
            key = keys[misses[ident]]
            for path in same[key]:
                if not outcome.ok:
                    failures[path] = ParseFailure(path, outcome.line, outcome.message, outcome.column)
            if _lasting(outcome):
                fresh[key] = Cached(None if outcome.ok else outcome.message, outcome.line, outcome.column)
            done += len(same[key])
            if progress:
                progress(done, total)

        pool = ParsePool(interpreter, jobs=jobs, timeout=timeout, mem_limit=mem_limit, max_size=max_size)
        pool.run(_jobs(misses, by_path, data, loader), len(misses), on_result)
        if cache is not None:
            cache.put_many(env, fresh.items())
            if cache.note and cache.note not in notes:
                notes.append(cache.note)
        if pool.restarts:
            notes.append(f"{pool.restarts} parse worker(s) were restarted after a crash or timeout")

    markers = _scan_touched(by_path, data, touched, loader, max_size)
    return ParseReport(
        files=total,
        failed=tuple(sorted(failures.values(), key=lambda f: f.path)),
        version=target.text,
        version_source=target.source,
        interpreter=interpreter.describe(),
        cached=cached,
        conflict_markers=tuple(markers),
        notes=tuple(notes),
    )


def _lasting(outcome: ParseOutcome) -> bool:
    """Whether an outcome is a fact about the content (cacheable), not about this run's conditions:
    crashes, timeouts and a bare MemoryError (our RLIMIT_AS, not the parser's own "too complex")."""
    if not outcome.cacheable or outcome.message == "MemoryError":
        return False
    return not outcome.message.startswith("parser error:")


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


def _load(loader: Loader | None, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    if not paths:
        return
    if loader is None:
        raise ValueError(f"no bytes, file or loader for {paths[0]!r}")
    for expected, (path, content) in zip(paths, loader(paths), strict=True):
        if path != expected:
            raise ValueError(f"loader returned {path!r}, expected {expected!r}")
        yield path, content


def _jobs(
    misses: list[str], by_path: dict[str, PyFile], data: dict[str, bytes], loader: Loader | None
) -> Iterator[ParseJob]:
    """Jobs in ``misses`` order; blobs not yet in memory are streamed from the loader as needed."""
    lazy = [p for p in misses if p not in data and by_path[p].file is None]
    stream = _load(loader, lazy)
    for ident, path in enumerate(misses):
        if path in data:
            yield ParseJob(ident, data=data[path])
        elif by_path[path].file is not None:
            yield ParseJob(ident, file=by_path[path].file, size=by_path[path].size)
        else:
            _, content = next(stream)
            yield ParseJob(ident, data=content)


def _scan_touched(
    by_path: dict[str, PyFile],
    data: dict[str, bytes],
    touched: Collection[str],
    loader: Loader | None,
    cap: int,
) -> list[ConflictMarker]:
    markers: list[ConflictMarker] = []
    lazy = []
    for path in sorted(set(touched) & by_path.keys()):
        f = by_path[path]
        content: bytes | str | None = data.get(path, f.data)
        if content is None and f.file is not None:
            content = _read(f, cap)
        if content is None:
            lazy.append(path)
        elif isinstance(content, bytes):
            markers += conflict_markers(path, content)
    for path, content in _load(loader, lazy):
        markers += conflict_markers(path, content)
    return sorted(markers, key=lambda m: (m.path, m.line))
