"""Parse results cached by content: (git blob id, interpreter+grammar) -> outcome, in one SQLite file.

Files parsed in place from disk are also keyed by what ``lstat`` says, as git's index does: an
absolute path whose (size, mtime_ns, inode) are unchanged since its blob id was recorded is not read
again. The racy-git rule holds: each record carries the cache's write time (taken on the cache's own
file, so in the file system's clock), and a record whose mtime is not older than that time is never
trusted (the file may have changed again within the same clock tick), so that file is re-hashed.

SQLite gives atomic writes, locking between concurrent runs (two CI jobs sharing a cache) and
thousands of lookups in a few milliseconds. The cache is an optimisation only: a locked, unwritable
or corrupt database is never fatal — a corrupt file is deleted and rebuilt, anything else turns the
cache off for the run with a note saying why.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vimesync.pycheck.model import StatKey

DB_NAME = "parse-cache.sqlite3"
SCHEMA = 2  # 2: the stats table
MAX_DB_BYTES = 256 << 20  # past this the file is simply started afresh (no eviction bookkeeping)
_CHUNK = 500  # keys per SELECT (well under SQLite's bound-parameter limit)


@dataclass(frozen=True)
class Cached:
    message: str | None  # None: the file parses
    line: int | None = None
    column: int | None = None

    @property
    def ok(self) -> bool:
        return self.message is None

    @classmethod
    def of(cls, message: str | None, line: int | None = None, column: int | None = None) -> Cached:
        """The outcome of a file; that of almost every file, "parses", is one object for all (a
        warm check makes one per file of the tree, and a frozen dataclass is not cheap to make)."""
        if message is None and line is None and column is None:
            return PARSES
        return cls(message, line, column)


PARSES = Cached(None)


def _cached(message: object, line: object, col: object) -> Cached | None:
    """A results row as an outcome; None when the row is not one we wrote (a damaged file)."""
    if message is not None and not isinstance(message, str):
        return None
    return Cached.of(message, line if isinstance(line, int) else None, col if isinstance(col, int) else None)


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class ParseCache:
    """Open (creating) the cache in ``directory``; ``enabled=False`` gives a cache that never hits."""

    def __init__(self, directory: Path | None, *, enabled: bool = True, busy_timeout: float = 10.0) -> None:
        self.directory = directory  # None: nothing is kept (--no-cache)
        self.busy_timeout = busy_timeout  # seconds to wait for another run's write lock
        self.path = (directory or Path()) / DB_NAME  # only opened with a directory
        self.note: str | None = None  # why the cache is off, when it is
        self._conn: sqlite3.Connection | None = None
        if enabled and directory is not None:
            self._open()

    @property
    def enabled(self) -> bool:
        return self._conn is not None

    def _open(self, *, retry: bool = True) -> None:
        assert self.directory is not None
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            if self.path.exists() and self.path.stat().st_size > MAX_DB_BYTES:
                self._remove()
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version != SCHEMA:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("DROP TABLE IF EXISTS results")
                    conn.execute("DROP TABLE IF EXISTS stats")
                    conn.execute(
                        "CREATE TABLE results (env TEXT NOT NULL, oid TEXT NOT NULL, line INTEGER,"
                        " col INTEGER, message TEXT, PRIMARY KEY (env, oid)) WITHOUT ROWID"
                    )
                    conn.execute(
                        "CREATE TABLE stats (path BLOB PRIMARY KEY, size INTEGER, mtime INTEGER,"
                        " inode INTEGER, oid TEXT, written INTEGER) WITHOUT ROWID"
                    )
                    conn.execute(f"PRAGMA user_version = {SCHEMA}")
                    conn.execute("COMMIT")
                conn.execute("PRAGMA synchronous = NORMAL")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        except sqlite3.Error as exc:
            if retry and not _is_busy(exc):
                self._remove()
                self._open(retry=False)
                self.note = self.note or f"parse cache was unreadable ({exc}); it has been reset"
            else:
                self.note = f"parse cache disabled: {self.path}: {exc}"
        except OSError as exc:
            self.note = f"parse cache disabled: {exc}"

    def _remove(self) -> None:
        # Only our own file and its journal; another run holding it open keeps its (unlinked) copy.
        for p in (self.path, self.path.with_name(DB_NAME + "-journal")):
            try:
                p.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                pass

    def _failed(self, exc: sqlite3.Error) -> None:
        """A query failed: busy -> skip quietly; corrupt -> start a fresh file next time."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if _is_busy(exc):
            self.note = f"parse cache busy, not used for part of this run: {exc}"
        else:
            self.note = f"parse cache was unreadable ({exc}); it has been reset"
            self._remove()
            self._open(retry=False)

    def get_many(self, env: str, oids: Collection[str]) -> dict[str, Cached]:
        """The cached outcomes among ``oids`` for interpreter/grammar ``env``."""
        found: dict[str, Cached] = {}
        if self._conn is None or not oids:
            return found
        keys = list(oids)
        try:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT oid, message, line, col FROM results WHERE env = ? AND oid IN ({marks})",
                    [env, *chunk],
                )
                for oid, message, line, col in rows:
                    cached = _cached(message, line, col)
                    if isinstance(oid, str) and cached is not None:
                        found[oid] = cached
        except sqlite3.Error as exc:
            self._failed(exc)
            return {}
        return found

    @classmethod
    def holds(cls, directory: Path | None, env: str) -> bool:
        """Whether the cache in ``directory`` holds an outcome of ``env``; a cache never written
        is not created to answer (its file and tables are made when there is something to keep)."""
        if directory is None or not (directory / DB_NAME).is_file():
            return False
        with cls(directory) as cache:
            return cache.has_results(env)

    def has_results(self, env: str) -> bool:
        """Whether any outcome of interpreter/grammar ``env`` is cached (False when off or failing)."""
        if self._conn is None:
            return False
        try:
            row = self._conn.execute("SELECT 1 FROM results WHERE env = ? LIMIT 1", [env]).fetchone()
        except sqlite3.Error as exc:
            self._failed(exc)
            return False
        return row is not None

    def known_oids(self, files: Mapping[bytes, StatKey]) -> dict[bytes, str]:
        """Blob ids of the ``files`` (absolute path -> its lstat key now) whose record matches that
        key and is older than the cache's write time that came with it (the racy-git rule)."""
        return {path: oid for path, (oid, _) in self.known(files).items()}

    def known(
        self, files: Mapping[bytes, StatKey], env: str | None = None
    ) -> dict[bytes, tuple[str, Cached | None]]:
        """:meth:`known_oids`, each with its outcome for ``env`` when cached (one query for both:
        a warm run's thousands of unchanged files cost one pass over the stats table)."""
        found: dict[bytes, tuple[str, Cached | None]] = {}
        if self._conn is None or not files:
            return found
        keys = list(files)
        outcome = "r.message, r.line, r.col, r.oid IS NOT NULL" if env is not None else "NULL, NULL, NULL, 0"
        join = " LEFT JOIN results r ON r.env = ? AND r.oid = s.oid" if env is not None else ""
        try:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT s.path, s.size, s.mtime, s.inode, s.oid, s.written, {outcome}"
                    f" FROM stats s{join} WHERE s.path IN ({marks})",
                    [env, *chunk] if env is not None else chunk,
                )
                for path, size, mtime, inode, oid, written, message, line, col, hit in rows:
                    now = files.get(path) if isinstance(path, bytes) else None
                    if (
                        now is not None
                        and now == (size, mtime, inode)
                        and isinstance(oid, str)
                        and isinstance(written, int)
                        and now[1] < written  # its mtime, older than the cache's write time
                    ):
                        found[path] = (oid, _cached(message, line, col) if hit else None)
        except sqlite3.Error as exc:
            self._failed(exc)
            return {}
        return found

    def put_stats(self, items: Iterable[tuple[bytes, StatKey, str]]) -> None:
        """Record (absolute path, lstat key, blob id) of files just read and hashed; call it after
        the reads: the write time recorded with them is taken now."""
        self.put("", (), items)

    def fs_now(self) -> int:
        """The file system's current time (ns), as it stamps a file it writes: the cache's own file
        is touched and read back, so the clock and its granularity are those of file mtimes."""
        os.utime(self.path)
        return os.stat(self.path).st_mtime_ns

    def put(
        self,
        env: str,
        results: Iterable[tuple[str, Cached]],
        stats: Iterable[tuple[bytes, StatKey, str]] = (),
    ) -> None:
        """Store outcomes of ``env`` (blob id, outcome) and stat records (see :meth:`put_stats`), in
        one transaction; silently skipped when the cache is off or busy."""
        outcomes = [(env, oid, c.line, c.column, c.message) for oid, c in results]
        keyed = list(stats)
        if self._conn is None or not (outcomes or keyed):
            return
        writes: list[tuple[str, Sequence[tuple[object, ...]]]] = []
        if keyed:
            try:
                written = self.fs_now()
            except OSError:
                written = None
            if written is not None:
                writes.append(
                    (
                        "INSERT OR REPLACE INTO stats (path, size, mtime, inode, oid, written)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        [(path, k.size, k.mtime_ns, k.inode, oid, written) for path, k, oid in keyed],
                    )
                )
        if outcomes:
            sql = "INSERT OR REPLACE INTO results (env, oid, line, col, message) VALUES (?, ?, ?, ?, ?)"
            writes.append((sql, outcomes))
        self._write(writes)

    def _write(self, writes: Sequence[tuple[str, Sequence[tuple[object, ...]]]]) -> None:
        if self._conn is None or not writes:
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            for sql, rows in writes:
                self._conn.executemany(sql, rows)
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._failed(exc)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> ParseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
