"""One parse worker process and the conversation with it: the protocol of ``_worker.py`` (its
requests and responses, a keyed file job's key), the jobs and outcomes the pool deals in, and
:class:`Worker`, the process with its pipes and the jobs it has in flight."""

from __future__ import annotations

import os
import struct
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from vimesync.procrun import Command, end, start
from vimesync.pycheck.interp import child_env
from vimesync.pycheck.model import StatKey

REQUEST = struct.Struct(">cII")  # mirrors _worker.py
RESPONSE = struct.Struct(">IBiiI")
KEY = struct.Struct(">20sQqQ")  # after the response to a keyed file job: blob id, size, mtime_ns, inode
HANDSHAKE_ID = 0xFFFFFFFF
STARTUP_TIMEOUT = 30.0
# Real code parses at ~5 MiB/s, but a dense generated table can take ~2 s per MiB (and ~350 MiB of
# memory per MiB): big files get more time instead of being reported as hangs.
SECONDS_PER_MIB = 5.0
JOB_OVERHEAD = 256  # in-flight bytes a job counts beyond its source: its request and its answer


def _iov_max() -> int:
    """How many buffers one writev(2) takes here (Linux: 1024; POSIX promises 16)."""
    try:
        return max(16, min(os.sysconf("SC_IOV_MAX"), 1024))
    except (ValueError, OSError, AttributeError):
        return 16


IOV_MAX = _iov_max()


class ParseJob(NamedTuple):
    """One file for a worker. A NamedTuple, as ``PyFile``: a check makes thousands of jobs and
    outcomes, and the main process's share of the cores is taken from the workers."""

    ident: int
    data: bytes | None = None  # the source, or
    file: str | Path | None = None  # a file the worker reads itself
    size: int = -1  # of a file job, when known (for its time allowance)
    keyed: bool = False  # a file job whose outcome also says what was read (ParseOutcome.key)

    @property
    def nbytes(self) -> int:
        return len(self.data) if self.data is not None else max(self.size, 0)


class ParseOutcome(NamedTuple):
    ok: bool
    line: int | None = None
    column: int | None = None
    message: str = ""
    cacheable: bool = True  # False for crashes and timeouts: they say nothing lasting about the content
    # Of a keyed job: the blob id of the bytes the worker parsed, and the fstat of the file it read
    # them from; None when it could not read the file (or crashed first).
    key: tuple[str, StatKey] | None = None


OnResult = Callable[[int, ParseOutcome], None]  # a job's ident and its outcome


# The pipe to a worker holds this much (Linux; elsewhere, or past the system's limit, the default
# 64 KiB): a changed file sent as bytes is written whole, not over several rounds of the loop.
PIPE_BYTES = 1 << 20


def _widen(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class Worker:
    def __init__(self, argv: list[str]) -> None:
        # Started and ended by the process runner (its own group: Ctrl-C and SIGTERM end it
        # through run()'s handler), kept here: the pool's poll loop is the conversation. Our
        # folder as its own (a file job may name a relative path), and no GITHUB_TOKEN & co. in
        # a process that reads PR code.
        command = Command(argv, Path(os.getcwd()), child_env())
        self.proc = start(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        self.efd: int | None = self.proc.stderr.fileno()
        os.set_blocking(self.wfd, False)
        _widen(self.wfd)
        os.set_blocking(self.rfd, False)
        os.set_blocking(self.efd, False)
        self.out: deque[memoryview] = deque()
        self.inflight: deque[ParseJob] = deque()
        self.inflight_bytes = 0
        self.rbuf = bytearray()
        self.err = b""
        self.ready = False
        self.deadline: float | None = time.monotonic() + STARTUP_TIMEOUT
        self.allowed = STARTUP_TIMEOUT  # seconds the head job was given

    def arm(self, timeout: float) -> None:
        """Start the clock for the job at the head of the queue (the one the worker is on)."""
        if not self.ready:
            return
        if not self.inflight:
            self.deadline = None
            return
        self.allowed = timeout + self.inflight[0].nbytes / (1 << 20) * SECONDS_PER_MIB
        self.deadline = time.monotonic() + self.allowed

    def send(self, job: ParseJob, timeout: float) -> None:
        if job.data is not None:
            self.out.append(memoryview(REQUEST.pack(b"D", job.ident, len(job.data))))
            self.out.append(memoryview(job.data))
        else:  # a path: one write, header and all
            assert job.file is not None
            path = os.fsencode(job.file)
            kind = b"K" if job.keyed else b"P"
            self.out.append(memoryview(REQUEST.pack(kind, job.ident, len(path)) + path))
        self.inflight.append(job)
        self.inflight_bytes += job.nbytes + JOB_OVERHEAD
        if len(self.inflight) == 1:
            self.arm(timeout)

    def answered(self) -> ParseJob:
        """The job at the head of the queue, taken off it: its answer came."""
        job = self.inflight.popleft()
        self.inflight_bytes -= job.nbytes + JOB_OVERHEAD
        return job

    @property
    def queued(self) -> int:
        """In-flight bytes behind the job the worker is on: work it surely has after that one."""
        return self.inflight_bytes - (self.inflight[0].nbytes + JOB_OVERHEAD if self.inflight else 0)

    def flush(self) -> None:
        """Write what the pipe takes now, many requests per system call; BrokenPipeError when
        the worker is gone."""
        out = self.out
        while out:
            try:
                n = os.writev(self.wfd, list(islice(out, IOV_MAX)))
            except BlockingIOError:
                return
            while out and n >= len(out[0]):
                n -= len(out.popleft())
            if n:  # the pipe took part of a request: it is full, the rest waits for the next poll
                out[0] = out[0][n:]
                return

    def flush_early(self) -> None:
        """:meth:`flush` before the poll asks for it; a worker gone is left for the poll loop to
        find (what stays unsent makes its pipe report an error), which re-sends its jobs."""
        try:
            self.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def frames(self) -> Iterator[tuple[int, ParseOutcome]]:
        """Complete responses in the read buffer. Lazily: the caller takes each response's job off
        ``inflight`` before the next is read, so the head of ``inflight`` is the job the next
        response answers (after the handshake), and says whether a key follows it. What was read
        leaves the buffer once, when the caller is done (not a shift of the rest per response)."""
        buf, inflight, pos = self.rbuf, self.inflight, 0
        try:
            while len(buf) - pos >= RESPONSE.size:
                ident, status, line, col, n = RESPONSE.unpack_from(buf, pos)
                keyed = self.ready and bool(inflight) and inflight[0].keyed
                start = pos + RESPONSE.size
                end = start + n + (KEY.size if keyed else 0)
                if len(buf) < end:
                    return
                msg = buf[start : start + n].decode("utf-8", "replace") if n else ""
                key = None
                if keyed:
                    oid, size, mtime_ns, inode = KEY.unpack_from(buf, start + n)
                    key = (oid.hex(), StatKey(size, mtime_ns, inode)) if any(oid) else None
                pos = end
                yield (
                    ident,
                    ParseOutcome(
                        status == 0, None if line < 0 else line, None if col < 0 else col, msg, True, key
                    ),
                )
        finally:
            del buf[:pos]

    def drain_stderr(self) -> None:
        if self.efd is None:
            return
        try:
            chunk = os.read(self.efd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.efd = None
        self.err = (self.err + chunk)[-4096:]  # keep the tail for a start-up failure message

    def kill(self) -> int | None:
        code = end(self.proc, wait=10)
        for _ in range(16):  # what it said before dying, for a start-up failure message
            if self.efd is None:
                break
            self.drain_stderr()
        self.efd = None
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        return code
