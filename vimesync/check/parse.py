"""One call for ``patches check``: parse the tree "pinned source + the files the stack changed".

Untouched files are parsed in place from the source (a git source's blobs are read only on a cache
miss); changed files come from the caller as bytes, read from its scratch tree without following
a symlink (``check.changed_files``), so nothing here opens a scratch path. The grammar target is read from the
*patched* pyproject.toml / .python-version, since a patch may bump requires-python.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from vimesync import git, nofollow
from vimesync.errors import BadInput, VimesyncError
from vimesync.pycheck.cache import ParseCache
from vimesync.pycheck.early import EarlyParse, begin_parse
from vimesync.pycheck.interp import Interpreter, find_interpreter, join_prefetch, prefetch
from vimesync.pycheck.model import ParseReport, PyFile
from vimesync.pycheck.pool import ParsePool
from vimesync.pycheck.scan import MAX_SIZE, FileInput, ParseLimits, Progress, new_pool, parse_env, parse_tree
from vimesync.pycheck.target import MAX_PYPROJECT_BYTES, Target, metadata_files, resolve_target
from vimesync.sources import Source

Changed = Mapping[str, bytes | None]  # relpath -> new content; None: deleted (or now a symlink)

MAX_TOP_ENTRIES = 10_000  # a source folder's top level, looked through for its core metadata
NEWEST_GRAMMAR = (3, 14)  # the newest grammar tried for a file that fails at the pin itself
MAX_RETRIED = 200  # failing untouched files re-parsed under newer grammars (each costs a worker)


class WorkersAhead:
    """Parse workers started on the prefetch thread while the source is listed, for the
    interpreter its top-level files declare, when the cache holds nothing for it: each starts up
    (an interpreter start, ~10 ms) on a core the listing leaves idle. :func:`begin_patched`
    takes them when it decides on that interpreter; :meth:`stop` ends those not taken."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.cache_dir = cache_dir
        self._pool: ParsePool | None = None
        self._interpreter: Interpreter | None = None

    def start(self, interpreter: Interpreter) -> None:
        """On the prefetch thread: the default pool of ``interpreter``, started when cold."""
        if ParseCache.holds(self.cache_dir, parse_env(interpreter)):
            return  # a warm run parses few files, and not before the stack applies
        pool = new_pool(interpreter, ParseLimits())
        try:
            pool.start()
        except BaseException:
            pool.__exit__(None, None, None)
            raise
        self._pool, self._interpreter = pool, interpreter

    def take(self, interpreter: Interpreter, jobs: int | None) -> ParsePool | None:
        """The workers, when started for ``interpreter`` and ``jobs`` (waits for the thread);
        they are the caller's from now on. Others are stopped."""
        join_prefetch()
        pool = self._pool
        if pool is None or self._interpreter != interpreter or jobs not in (None, pool.jobs):
            self.stop()
            return None
        self._pool = None
        return pool

    def stop(self) -> None:
        """End the workers no one took (waits for the thread)."""
        join_prefetch()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.__exit__(None, None, None)


@contextmanager
def interpreter_prefetched(
    folder: Path, *, python: str | None, cache_dir: Path | None
) -> Iterator[WorkersAhead]:
    """While the caller opens a source folder (lists it: ~25 ms for a wheel of 3,000 files), the
    interpreter for the grammar its top-level files declare is found on a helper thread
    (:func:`vimesync.pycheck.interp.prefetch`): the probe, an interpreter start, no longer waits
    for the listing. With nothing of that interpreter cached, its parse workers start there too
    (:class:`WorkersAhead`, for :func:`begin_patched`). Only a guess made early:
    :func:`begin_patched` and :func:`parse_patched` decide on the listed, patched tree as before (a
    patched pyproject.toml may name another version; the guess then costs interpreter starts).
    Nothing is begun for a git source (its files are objects, not the folder's), for what is not
    a folder, or when the files cannot be read; leaving waits for the thread and stops the
    workers not taken."""
    ahead = WorkersAhead(cache_dir)
    try:
        guess = _declared_target(folder, python)
        if guess is not None:
            prefetch(guess.version, cache_dir=cache_dir, then=ahead.start)
        yield ahead
    finally:
        ahead.stop()


def _declared_target(folder: Path, python: str | None) -> Target | None:
    """The target the top-level files of the source folder declare, read without the listing
    (nothing through a symlink); None when it is not a plain folder or they cannot be read."""
    try:
        if folder.is_symlink() or not folder.is_dir() or git.repo_at(folder) is not None:
            return None
        names = []
        with os.scandir(folder) as it:
            for n, d in enumerate(it):
                if n >= MAX_TOP_ENTRIES:
                    return None
                if d.name == "PKG-INFO":
                    names.append(d.name)
                elif d.name.endswith(".dist-info") and d.is_dir(follow_symlinks=False):
                    names.append(f"{d.name}/METADATA")
    except (OSError, VimesyncError):
        return None

    def read(path: str) -> bytes | None:
        try:
            got = nofollow.read_entry(folder, path, cap=MAX_PYPROJECT_BYTES)
        except OSError:
            return None
        return got[1] if got is not None and stat.S_ISREG(got[0].st_mode) else None

    try:
        return resolve_target(python, read, metadata_files(names))
    except VimesyncError:
        return None


def begin_patched(
    source: Source,
    touched: Collection[str],
    *,
    python: str | None = None,
    cache_dir: Path | None = None,
    jobs: int | None = None,
    ahead: WorkersAhead | None = None,
) -> EarlyParse | None:
    """Begin the parse of ``source`` patched by a stack that writes ``touched``, before it is
    applied: when the stack leaves the files that decide the grammar alone and the cache holds
    nothing for that grammar, the workers (those started ``ahead``, when of that interpreter)
    take the largest source files the stack leaves alone. None when not begun; then, as for
    anything that goes wrong here, :func:`parse_patched` does all the work itself at its time
    (an error belongs to the parse, after the stack applied). Workers ``ahead`` are taken or
    stopped here."""
    try:
        return _begin_patched(source, touched, python, cache_dir, jobs, ahead)
    finally:
        if ahead is not None:
            ahead.stop()  # those not taken: not left idle for the whole run


def _begin_patched(
    source: Source,
    touched: Collection[str],
    python: str | None,
    cache_dir: Path | None,
    jobs: int | None,
    ahead: WorkersAhead | None,
) -> EarlyParse | None:
    entries = source.list_files()
    deciding = {"pyproject.toml", ".python-version", *metadata_files(entries)}
    if any(_at_or_below(path, touched) for path in deciding):
        return None  # the patched tree may target another grammar

    def read(path: str) -> bytes | None:
        e = entries.get(path)
        return source.read(path) if e is not None and not e.is_symlink else None

    try:
        target = resolve_target(python, read, metadata_files(entries))
        interpreter = find_interpreter(target.version, cache_dir=cache_dir)
    except VimesyncError:
        return None
    env = parse_env(interpreter)
    pool = ahead.take(interpreter, jobs) if ahead is not None else None  # the cache was cold for it
    if pool is None:
        if ParseCache.holds(cache_dir, env):
            return None  # a warm run: most files are answered by the cache, not parsed
        pool = new_pool(interpreter, ParseLimits(jobs=jobs))
        pool.start()  # the workers start up (~10 ms) while their first files are chosen
    begun = None
    try:
        left = _left_alone(source.python_files(exclude=touched), touched)
        begun = begin_parse(left, interpreter, env, pool, max_size=MAX_SIZE)
    finally:
        if begun is None:  # nothing to begin with, or choosing failed: the workers are stopped
            pool.__exit__(None, None, None)
    return begun


def _at_or_below(path: str, touched: Collection[str]) -> bool:
    """Whether ``path`` or a folder above it is among ``touched`` (a patch may turn a folder of the
    source into a file, and its files are then gone)."""
    parts = path.split("/")
    return any("/".join(parts[:n]) in touched for n in range(1, len(parts) + 1))


def _left_alone(files: list[PyFile], touched: Collection[str]) -> list[PyFile]:
    """``files`` minus those :func:`_at_or_below` ``touched``, each folder looked up once: files
    share folders, and the workers wait for this choice (a join per prefix per file took ~4 ms
    for 2,573 files)."""
    gone: dict[str, bool] = {"": False}  # folder -> whether it or a folder above it is touched

    def folder_gone(folder: str) -> bool:
        chain = []  # up to the nearest folder known, without recursion (a tree may be deep)
        while folder not in gone:
            chain.append(folder)
            folder = folder.rpartition("/")[0]
        known = gone[folder]
        for name in reversed(chain):
            known = gone[name] = known or name in touched
        return known

    return [f for f in files if f.path not in touched and not folder_gone(f.path.rpartition("/")[0])]


def parse_patched(
    source: Source,
    changed: Changed,
    *,
    python: str | None = None,
    cache_dir: Path | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    early: EarlyParse | None = None,
) -> ParseReport:
    """Parse every ``*.py`` of ``source`` with ``changed`` applied; scan changed files for conflict markers.

    ``python`` is ``--python X.Y`` (None: what the patched tree declares, else the running
    interpreter). Raises BadInput when the grammar needs an interpreter that cannot be found.
    """
    entries = source.list_files()

    def read(path: str) -> bytes | None:
        if path in changed:
            return changed[path]
        e = entries.get(path)
        return source.read(path) if e is not None and not e.is_symlink else None

    target = resolve_target(python, read, metadata_files(entries))
    interpreter = find_interpreter(target.version, cache_dir=cache_dir)
    files: list[FileInput] = list(source.python_files(exclude=changed.keys()))
    for path, content in changed.items():
        if content is not None:  # else deleted, or now a symlink: nothing of its own to parse
            files.append(PyFile(path, size=len(content), data=content))
    with ParseCache(cache_dir) as cache:
        begun = early if early is not None and early.interpreter == interpreter else None
        report = parse_tree(
            files,
            target=target,
            interpreter=begun or interpreter,
            cache=cache,
            limits=ParseLimits(jobs=jobs),
            progress=progress,
            touched=set(changed),
            loader=source.read_many,
        )
        if report.failed:
            report = _label_untouched(report, changed, read, target, cache, jobs)
    return report


def _label_untouched(
    report: ParseReport,
    changed: Changed,
    read: Callable[[str], bytes | None],
    target: Target,
    cache: ParseCache,
    jobs: int | None,
) -> ParseReport:
    """Mark the failures in files the stack did not change (they fail at the pin itself), and find
    the oldest newer grammar that parses each, with the interpreters vimesync can find."""
    failed = [replace(f, untouched=f.path not in changed) for f in report.failed]
    retry = {f.path for f in failed if f.untouched and f.message.startswith("SyntaxError")}
    if len(retry) > MAX_RETRIED:
        retry = set(sorted(retry)[:MAX_RETRIED])
    newer: dict[str, str] = {}
    version = target.version
    while retry and version < NEWEST_GRAMMAR:
        version = (version[0], version[1] + 1)
        try:
            interpreter = find_interpreter(version)
        except BadInput:  # none installed for that grammar: try the next
            continue
        files = [PyFile(p, size=len(d), data=d) for p in sorted(retry) if (d := read(p)) is not None]
        again = parse_tree(
            files,
            target=Target(version, target.source),
            interpreter=interpreter,
            cache=cache,
            limits=ParseLimits(jobs=jobs),
        )
        still = {f.path for f in again.failed}
        for path in retry - still:
            newer[path] = f"{version[0]}.{version[1]}"
        retry &= still
    failed = [replace(f, parses_with=newer.get(f.path)) for f in failed]
    return replace(report, failed=tuple(failed))
