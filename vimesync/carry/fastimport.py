"""Writing carried commits through one ``git fast-import``: blobs, commits and the branch, with
no process per PR. fast-import builds trees itself, moves the branch only at a ``checkpoint`` or
at the end (and only forward: never ``--force``), and a killed carry leaves the branch at its last
checkpoint (its partial pack is discarded), which ``--continue`` picks up from."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path

from vimesync import git
from vimesync.carry.memtree import GITLINK, Leaf
from vimesync.errors import GitError

_RAW_DATE = re.compile(r"@?(\d{1,15}) ([+-]\d{4})")


def raw_date(value: str | None) -> str:
    """``value`` as fast-import's raw date (``<seconds> <+zone>``), else now in local time."""
    if value and (m := _RAW_DATE.fullmatch(value.strip())):
        return f"{m.group(1)} {m.group(2)}"
    now = time.time()
    offset = time.localtime(now).tm_gmtoff // 60
    sign = "+" if offset >= 0 else "-"
    return f"{int(now)} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def quote(path: str) -> bytes:
    """A path for fast-import: C-style quoted (accepted always, needed for LF and a leading quote)."""
    raw = path.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for b in raw:
        if b in (0x22, 0x5C):
            out += b"\\" + bytes([b])
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def ident(name: str, email: str, date: str) -> bytes:
    return f"{name} <{email}> {date}".encode("utf-8", "replace")


class FastImport:
    """One ``git fast-import`` writing onto ``ref`` from commit ``start``."""

    def __init__(self, repo: Path, ref: str, start: str) -> None:
        self.repo = repo
        self.ref = ref
        self.start = start
        self.proc = git.popen(
            repo, ["fast-import", "--quiet", "--done", "--date-format=raw", "--cat-blob-fd=1"]
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._marks: dict[str, int] = {}  # blob oid -> mark
        self._next = 1
        self._first = True
        self.last_mark: int | None = None

    def _mark(self) -> int:
        self._next += 1
        return self._next - 1

    def _send(self, data: bytes) -> None:
        try:
            self._in.write(data)
        except BrokenPipeError:
            self._fail()

    def _fail(self) -> None:
        self.proc.wait()
        err = self.proc.stderr_file  # type: ignore[attr-defined]
        err.seek(0)
        raise GitError(f"{self.repo}: git fast-import: {err.read(2000).decode('utf-8', 'replace').strip()}")

    def blobs(self, blobs: dict[str, bytes]) -> None:
        for oid, data in blobs.items():
            if oid in self._marks:
                continue
            mark = self._mark()
            self._marks[oid] = mark
            self._send(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")

    def _ref(self, entry: Leaf) -> bytes:
        if entry.mode != GITLINK and entry.oid in self._marks:
            return b":%d" % self._marks[entry.oid]
        return entry.oid.encode()

    def commit(
        self, message: str, author: bytes, committer: bytes, updates: Iterable[tuple[str, Leaf | None]]
    ) -> int:
        mark = self._mark()
        msg = message.encode("utf-8", "replace")
        parts = [
            b"commit " + self.ref.encode() + b"\n",
            b"mark :%d\n" % mark,
            b"author " + author + b"\n",
            b"committer " + committer + b"\n",
            b"data %d\n" % len(msg) + msg + b"\n",
        ]
        if self._first:
            parts.append(b"from " + self.start.encode() + b"\n")
            self._first = False
        for path, entry in updates:
            if entry is None:
                parts.append(b"D " + quote(path) + b"\n")
            else:
                parts.append(b"M %o " % entry.mode + self._ref(entry) + b" " + quote(path) + b"\n")
        self._send(b"".join(parts) + b"\n")
        self.last_mark = mark
        return mark

    def sha(self, mark: int) -> str:
        self._send(b"get-mark :%d\n" % mark)
        self._in.flush()
        line = self._out.readline()
        if not line:
            self._fail()
        return line.decode().strip()

    def checkpoint(self) -> None:
        """Land what was sent so far (pack written, branch moved) and wait until fast-import has:
        its answer to the ``get-mark`` that follows comes after the checkpoint is done, so the
        downstream can read every blob sent before it (the caller may drop its copies)."""
        self._send(b"checkpoint\n\n")
        if self._next > 1:  # a mark was given (a blob or a commit)
            self.sha(self._next - 1)
        else:
            self._in.flush()

    def close(self) -> None:
        """Finish: the pack is written and the branch moved to the last commit."""
        self._send(b"done\n")
        try:
            self._in.close()
        except BrokenPipeError:
            pass
        if self.proc.wait() != 0:
            self._fail()
        self._out.close()

    def kill(self) -> None:
        """Stop without moving the branch past the last checkpoint."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
