"""Blob contents for one carry, bounded in memory, and writing the ones the result uses.

Blobs are produced here (translated, merged) or read from the downstream or the upstream; what
is produced and not yet readable from the downstream is capped at :data:`MAX_HELD` bytes, and no
file larger than :data:`MAX_BLOB` is read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput, GitError

MAX_BLOB = 1 << 30  # bytes: a larger file (upstream or downstream) stops the carry as bad input
# Bytes of files the carry holds in memory: produced (translated, merged) and not yet readable from
# the downstream. A hostile upstream compresses well (a PR of thousands of repetitive files), so
# what a translation or a merge produces is bounded here, not by the size of the upstream's pack.
MAX_HELD = 1 << 30


class Blobs:
    """Blob contents by oid: produced by this carry (translated or merged, not written yet), the
    downstream's, or the upstream's. ``want`` marks a blob the result uses; ``flush`` writes those."""

    def __init__(self, downstream: Path, upstream: Path, algo: str) -> None:
        self.down = git.CatFile(downstream)
        self.up = git.CatFile(upstream)
        self.algo = algo
        self.cache: dict[str, bytes] = {}  # produced here
        self.wanted: set[str] = set()  # to be written into the downstream
        self.upstream_oids: set[str] = set()  # untranslated upstream objects (read from the upstream)
        # Written through fast-import, which makes them readable only at its next checkpoint.
        self.kept: dict[str, bytes] = {}
        self.cache_bytes = 0
        self.kept_bytes = 0

    def hash(self, data: bytes) -> str:
        h = hashlib.new(self.algo)
        h.update(b"blob %d\0" % len(data))
        h.update(data)
        return h.hexdigest()

    def add(self, data: bytes) -> str:
        oid = self.hash(data)
        if oid not in self.cache:
            self.cache[oid] = data
            self.cache_bytes += len(data)
            self._check()
        return oid

    def _check(self) -> None:
        if self.cache_bytes + self.kept_bytes > MAX_HELD:
            raise BadInput(
                f"the files this carry translated or merged pass {MAX_HELD >> 20:,} MiB in memory",
                hint="carry fewer PRs at a time (--pr N), or check [[upstream.translate]] in vimesync.toml",
            )

    def read_upstream(self, oid: str) -> bytes:
        """An upstream blob as the upstream holds it (before any translation)."""
        return self.up.read(oid, max_size=MAX_BLOB)

    def size(self, oid: str, *, upstream: bool = False) -> int:
        """A blob's size, read without its content when git holds it (an upstream blob with
        ``upstream``, or one the carry took from the upstream untranslated)."""
        for held in (self.cache, self.kept):
            if oid in held:
                return len(held[oid])
        if upstream or oid in self.upstream_oids:
            return self.up.size(oid)
        return self.down.size(oid)

    def read(self, oid: str) -> bytes:
        if oid in self.cache:
            return self.cache[oid]
        if oid in self.kept:
            return self.kept[oid]
        if oid in self.upstream_oids:
            return self.up.read(oid, max_size=MAX_BLOB)
        return self.down.read(oid, max_size=MAX_BLOB)

    def want(self, oid: str) -> None:
        if oid in self.cache or oid in self.upstream_oids:
            self.wanted.add(oid)

    def flush(self, write: Callable[[dict[str, bytes]], None]) -> None:
        if self.wanted:
            data = {}
            added = 0  # bytes moving into kept (produced ones, and upstream files read now)
            for oid in sorted(self.wanted):
                data[oid] = self.read(oid)
                if oid not in self.kept:
                    added += len(data[oid])
                    if self.kept_bytes + added > MAX_HELD:
                        self.cache_bytes = added
                        self._check()
            write(data)
            self.kept.update(data)
            self.kept_bytes += added
        self.wanted.clear()
        self.cache.clear()
        self.cache_bytes = 0
        self.upstream_oids.clear()

    def forget(self) -> None:
        """Drop what this run produced and wanted written (a replay, which writes nothing,
        between two items: what it holds stays bounded by one item's files)."""
        self.wanted.clear()
        self.cache.clear()
        self.cache_bytes = 0

    def release(self) -> None:
        """Forget the blobs written so far (call once the downstream can read them: after a
        synchronised fast-import checkpoint)."""
        self.kept.clear()
        self.kept_bytes = 0

    def close(self) -> None:
        self.down.close()
        self.up.close()


def blob_writer(repo: Path, scratch: Path) -> Callable[[dict[str, bytes]], None]:
    """Write blobs into ``repo`` through one ``git hash-object -w --no-filters --stdin-paths``."""

    def write(blobs: dict[str, bytes]) -> None:
        names = []
        for i, data in enumerate(blobs.values()):
            name = scratch / f"blob-{i}"
            name.write_bytes(data)
            names.append(str(name))
        try:
            out = git.run(
                repo,
                ["hash-object", "-w", "--no-filters", "--stdin-paths"],
                input="".join(n + "\n" for n in names).encode(),
            )
        finally:
            for n in names:
                os.unlink(n)
        got = out.decode().split()
        if got != list(blobs):
            raise GitError(f"{repo}: git hash-object wrote other objects than expected")

    return write
