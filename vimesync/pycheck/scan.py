"""``parse_tree``: parse every ``*.py`` file of a (patched) tree with the target grammar, in parallel,
cached by content, and flag leftover conflict markers in the files the patch stack touched.

Only ``*.py`` files are parsed (the issue's contract: what the interpreter imports). ``*.pyi`` stubs
are read by type checkers, which accept a grammar of their own, so they are not judged here; they are
still scanned for conflict markers when touched.

A parse is planned (:mod:`vimesync.pycheck.plan`: content keys, the cache's answers, what is left),
then performed here: the worker pool on what is left, its lasting outcomes cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass

from vimesync.git import blob_oid
from vimesync.pycheck.cache import Cached, ParseCache
from vimesync.pycheck.channel import ParseJob, ParseOutcome
from vimesync.pycheck.early import EarlyParse
from vimesync.pycheck.interp import Interpreter
from vimesync.pycheck.model import ConflictMarker, ParseFailure, ParseReport, PyFile, StatKey
from vimesync.pycheck.plan import FileInput, Loader, ParsePlan, cold_cache, load, plan_parse, read_file
from vimesync.pycheck.pool import DEFAULT_TIMEOUT, ParsePool
from vimesync.pycheck.target import Target

MAX_SIZE = 10 << 20  # bytes; larger files are reported, not parsed
# Bump when the worker's verdicts or messages change, so old cache entries stop matching
# (2: compiled to bytecode, so compiler-only errors fail).
WORKER_REV = 2

Progress = Callable[[int, int], None]
__all__ = ["FileInput", "Loader", "ParseLimits", "Progress", "blob_oid", "conflict_markers", "parse_tree"]


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


@dataclass(frozen=True)
class ParseLimits:
    """What a parse may use: ``jobs`` worker processes (None: one per CPU), ``timeout`` seconds per
    file (and more for a big one, see the pool), ``max_size`` bytes per file (larger ones are
    reported, not parsed), ``mem_limit`` bytes of address space per worker (None: a fair share)."""

    jobs: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_size: int = MAX_SIZE
    mem_limit: int | None = None


# Outcomes and stat records kept before they are written, in one transaction, while the parse
# goes on: the main process's share of the cores is small then, and a write costs ~5 ms per 1,000.
SAVE_ROWS = 2048
# ... and once more when this many files are left to answer (the smallest, as jobs go largest
# first: ~9 ms of work in sglang, longer than the write), so that the write after the last
# answer, which nothing overlaps, holds only their rows (~500, not up to SAVE_ROWS).
TAIL_ANSWERS = 256


def parse_tree(
    files: Iterable[FileInput],
    *,
    target: Target,
    interpreter: Interpreter | EarlyParse,
    cache: ParseCache | None = None,
    progress: Progress | None = None,
    touched: Collection[str] = (),
    loader: Loader | None = None,
    limits: ParseLimits = ParseLimits(),
) -> ParseReport:
    """Parse every ``*.py`` among ``files`` and scan the ``touched`` ones for conflict markers.

    ``files`` are PyFile records or ``(relpath, bytes | Path)`` pairs; when a path appears twice the
    last one wins (pass the source's files, then the patched scratch files). Inputs with neither
    bytes nor a file are read through ``loader`` (e.g. ``GitSource.read_many``), only on a cache miss.
    Non-``*.py`` inputs are never parsed, only scanned when touched.

    Two steps: the plan (each file's content key, the cache's answers, one parse per content
    left) and its performance (the worker pool on what is left, its lasting outcomes cached).
    ``interpreter`` is the one to parse with, or a parse begun early with one (:mod:`.early`):
    its pool, with the files it was given in flight.
    """
    early = interpreter if isinstance(interpreter, EarlyParse) else None
    runs = early.interpreter if early is not None else interpreter
    assert isinstance(runs, Interpreter)
    env = parse_env(runs)
    plan = None
    if early is not None:  # its files in flight must come first, as sent
        files = list(files)
        plan = plan_parse(files, env, cache, loader, limits.max_size, cold=True, first=early.paths)
        if plan.misses[: len(early.paths)] == early.paths:
            pool = early.pool
        else:  # not the tree it was begun for: its workers are stopped, the plan made afresh
            early.pool.__exit__(None, None, None)
            plan = None
    if plan is None:
        pool = new_pool(runs, limits)
    with pool:
        if plan is None:
            cold = cold_cache(cache, env)
            if cold:  # every file will be parsed: the workers start up while the plan is made
                pool.start()
            plan = plan_parse(files, env, cache, loader, limits.max_size, cold=cold)
        inputs = plan.inputs
        # before the parse, while the workers have files: after it, nothing would overlap it
        markers = _scan_touched(inputs.by_path, inputs.data, touched, loader, limits.max_size)
        notes = [cache.note] if cache is not None and cache.note else []
        sent = len(early.paths) if early is not None and pool is early.pool else 0
        notes += [n for n in _parse_misses(plan, pool, cache, loader, progress, sent) if n not in notes]
    return ParseReport(
        files=plan.total,
        failed=tuple(sorted(inputs.failures.values(), key=lambda f: f.path)),
        version=target.text,
        version_source=target.source,
        interpreter=runs.describe(),
        cached=plan.cached,
        conflict_markers=tuple(markers),
        notes=tuple(notes),
    )


def parse_env(interpreter: Interpreter) -> str:
    """The cache's name for what a parse runs: the interpreter, its grammar and the worker."""
    return f"{interpreter.cache_id}/w{WORKER_REV}"


def new_pool(interpreter: Interpreter, limits: ParseLimits) -> ParsePool:
    return ParsePool(
        interpreter,
        jobs=limits.jobs,
        timeout=limits.timeout,
        mem_limit=limits.mem_limit,
        max_size=limits.max_size,
    )


def _parse_misses(
    plan: ParsePlan,
    pool: ParsePool,
    cache: ParseCache | None,
    loader: Loader | None,
    progress: Progress | None,
    sent: int = 0,
) -> list[str]:
    """The plan performed: its misses parsed by the worker pool (the first ``sent`` of them are in
    flight already), each outcome given to every path of its content, the lasting ones cached;
    the notes the run leaves. A miss the pool never answered fails: nothing passes unparsed."""
    inputs = plan.inputs
    record = _Recorder(plan, cache, progress)
    if not plan.misses:
        return []
    jobs = _jobs(plan.misses, inputs.by_path, inputs.data, loader, inputs.unkeyed, start=sent)
    pool.run(jobs, len(plan.misses), record)
    for ident in sorted(set(range(len(plan.misses))) - record.answered):
        record(ident, ParseOutcome(False, message="not parsed: the parser gave no answer", cacheable=False))
    record.save()
    notes = [cache.note] if cache is not None and cache.note else []
    if pool.restarts:
        notes.append(f"{pool.restarts} parse worker(s) were restarted after a crash or timeout")
    return notes


class _Recorder:
    """The pool's callback: each outcome given to every path of its content, progress said, and
    the lasting outcomes (with the stat records of the files the workers read and keyed) saved
    to the cache every SAVE_ROWS rows while the workers parse, the rest by :meth:`save`."""

    def __init__(self, plan: ParsePlan, cache: ParseCache | None, progress: Progress | None) -> None:
        self.plan, self.cache, self.progress = plan, cache, progress
        self.done = plan.total - sum(map(len, plan.same.values())) - len(plan.inputs.unkeyed)
        self.fresh: dict[str, Cached] = {}
        self.stats: list[tuple[bytes, StatKey, str]] = []  # unkeyed files as their worker read them
        self.answered: set[int] = set()
        if progress:
            progress(self.done, plan.total)

    def __call__(self, ident: int, outcome: ParseOutcome) -> None:
        inputs = self.plan.inputs
        self.answered.add(ident)
        first = self.plan.misses[ident]
        if first in inputs.unkeyed:  # its worker read and keyed it
            paths = [first]
            key = outcome.key[0] if outcome.key is not None else None
            where = inputs.unkeyed[first]
            if key is not None:
                inputs.keys[first] = key
                if where is not None and outcome.key is not None:
                    self.stats.append((where, outcome.key[1], key))
        else:
            key = inputs.keys[first]
            paths = self.plan.same[key]
        for path in paths:
            if not outcome.ok:
                inputs.failures[path] = ParseFailure(path, outcome.line, outcome.message, outcome.column)
        if key is not None and _lasting(outcome):
            self.fresh[key] = Cached.of(None if outcome.ok else outcome.message, outcome.line, outcome.column)
        self.done += len(paths)
        if self.progress:
            self.progress(self.done, self.plan.total)
        left = len(self.plan.misses) - len(self.answered)
        if len(self.fresh) + len(self.stats) >= SAVE_ROWS or left == TAIL_ANSWERS:
            self.save()  # while the workers parse: the run's tail is then only the last few rows

    def save(self) -> None:
        """What is new, into the cache (after the reads: the write time recorded is now)."""
        if self.cache is not None:
            self.cache.put(self.plan.env, self.fresh.items(), self.stats)
        self.fresh.clear()
        self.stats.clear()


def _lasting(outcome: ParseOutcome) -> bool:
    """Whether an outcome is a fact about the content (cacheable), not about this run's conditions:
    crashes, timeouts and a bare MemoryError (our RLIMIT_AS, not the parser's own "too complex")."""
    if not outcome.cacheable or outcome.message == "MemoryError":
        return False
    return not outcome.message.startswith("parser error:")


def _jobs(
    misses: list[str],
    by_path: dict[str, PyFile],
    data: dict[str, bytes],
    loader: Loader | None,
    unkeyed: Collection[str] = (),
    *,
    start: int = 0,
) -> Iterator[ParseJob]:
    """Jobs in ``misses`` order from ``start`` (ident = index in ``misses``); blobs not yet in
    memory are streamed from the loader as needed; unkeyed files go to the workers as keyed file
    jobs."""
    lazy = [p for p in misses[start:] if p not in data and by_path[p].file is None]
    stream = load(loader, lazy)
    for ident, path in enumerate(misses[start:], start):
        if path in data:
            yield ParseJob(ident, data=data[path])
        elif by_path[path].file is not None:
            f = by_path[path]
            yield ParseJob(ident, file=f.file, size=f.size, keyed=path in unkeyed)
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
            content = read_file(f, cap)
        if content is None:
            lazy.append(path)
        elif isinstance(content, bytes):
            markers += conflict_markers(path, content)
    for path, content in load(loader, lazy):
        markers += conflict_markers(path, content)
    return sorted(markers, key=lambda m: (m.path, m.line))
