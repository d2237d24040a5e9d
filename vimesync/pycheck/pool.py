"""A pool of parse worker processes that survives hostile input.

One event loop (``poll`` over the workers' pipes, non-blocking writes) keeps every worker busy
with a few files in flight, so there is no per-file round trip and never a pipe deadlock. Each
worker answers in request order, so when one dies or stops answering for ``timeout`` seconds the
file at the head of its queue is the culprit: it is reported ("parser crashed", "timed out"),
the worker is replaced and the rest of its queue is re-sent. The run always finishes.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from vimesync.errors import BadInput
from vimesync.pycheck.channel import (
    HANDSHAKE_ID,
    OnResult,
    ParseJob,
    ParseOutcome,
    Worker,
)
from vimesync.pycheck.interp import Interpreter

WORKER = Path(__file__).with_name("_worker.py")

DEFAULT_TIMEOUT = 30.0  # seconds allowed for one file, plus SECONDS_PER_MIB for its size
# In flight per worker: enough to hide the round trip and to let the loop sleep between rounds,
# few enough that the tail of the run stays balanced across workers (jobs arrive largest first).
# A worker always gets a second file, whatever the bytes: with only the one it is on, it would
# wait for the next round when it finishes.
MAX_INFLIGHT = 64
MAX_INFLIGHT_BYTES = 1 << 20
# Between rounds the loop sleeps while every worker surely has work: half the time the source
# queued behind the file it is on takes at FAST_RATE (real code compiles at 5-30 MB/s), at most
# MAX_WAIT. Each round then takes many answers, and the main process, which wakes ~10 times less
# often, leaves the cores to the workers. Below MIN_WAIT it polls at once: the next answer wakes it.
FAST_RATE = 30e6  # bytes per second
MAX_WAIT = 0.025
MIN_WAIT = 0.001
# Primed before the run (pycheck.early): enough for each worker to stay busy while the caller
# applies the stack (~0.1 s on 2 cores; real code compiles at ~10 MB/s), however few files that is.
PRIME_INFLIGHT = 64
PRIME_BYTES = 3 << 20


def default_mem_limit(jobs: int) -> int:
    """RLIMIT_AS per worker: an equal share of physical memory (keeping one share for everything
    else), between 1 and 8 GiB, so that all workers together cannot exhaust the machine."""
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - no sysconf
        return 4 << 30
    return max(1 << 30, min(8 << 30, ram // (jobs + 1)))


def default_jobs() -> int:
    try:
        n = len(os.sched_getaffinity(0))  # the CPUs this process may use (containers, taskset)
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 64))


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def gather_time(workers: list[Worker]) -> float:
    """How long the loop may sleep before its next round with no worker running dry: half the
    time the least queued worker needs, at FAST_RATE, for what is queued behind the file it is on
    (0 below MIN_WAIT: poll, and wake on the next answer). Never while a request is still being
    written: a worker waits for the rest of a file the pipe did not take, and the poll wakes the
    loop as soon as the pipe has room."""
    if any(w.out for w in workers):
        return 0.0
    wait = min(MAX_WAIT, min(w.queued for w in workers) / FAST_RATE / 2)
    return wait if wait >= MIN_WAIT else 0.0


class ParsePool:
    """``jobs`` worker processes of ``interpreter``; use :meth:`run` once per batch of files."""

    def __init__(
        self,
        interpreter: Interpreter,
        *,
        jobs: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        mem_limit: int | None = None,
        max_size: int | None = None,
    ) -> None:
        """``mem_limit``: RLIMIT_AS bytes per worker; None picks :func:`default_mem_limit`, 0 none."""
        self.interpreter = interpreter
        self.jobs = max(1, jobs or default_jobs())
        self.timeout = timeout
        argv = [interpreter.executable, "-I", "-S", "-B", os.fspath(WORKER)]
        if interpreter.feature_version:
            argv += ["--feature-version", str(interpreter.feature_version[1])]
        if mem_limit is None:
            mem_limit = default_mem_limit(self.jobs)
        if mem_limit:
            argv += ["--mem-limit", str(mem_limit)]
        if max_size is not None:
            argv += ["--max-size", str(max_size)]
        self._argv = argv
        self.restarts = 0
        self._started: list[Worker] = []  # by start(), before run() had jobs for them
        self._entered = False  # inside ``with``: workers told to quit are reaped on leaving it
        self._leaving: list[Worker] = []  # told to quit, not yet reaped

    def _spawn(self) -> Worker:
        try:
            return Worker(self._argv)
        except OSError as exc:
            raise BadInput(f"cannot start the parse worker {self.interpreter.executable}: {exc}") from exc

    def start(self) -> None:
        """Start the workers now, so that they start up while the caller still plans; :meth:`run`
        takes them. Leave the pool (``with``) to stop those no run took."""
        while len(self._started) < self.jobs:
            self._started.append(self._spawn())

    def prime(self, jobs: list[ParseJob]) -> int:
        """Send the first of ``jobs`` to the workers :meth:`start` started, each to the least loaded,
        while one takes more in flight (PRIME_INFLIGHT, PRIME_BYTES): they work on them while the
        caller prepares the rest. Returns how many were sent (a prefix of ``jobs``); :meth:`run`
        must count them in its total, and their outcomes come to its callback."""
        ready = self._started
        sent = 0
        for job in jobs:
            room = [w for w in ready if len(w.inflight) < PRIME_INFLIGHT and w.inflight_bytes < PRIME_BYTES]
            if not room:
                break
            min(room, key=lambda w: w.inflight_bytes).send(job, self.timeout)
            sent += 1
        for w in ready:
            w.flush_early()
        return sent

    def __enter__(self) -> ParsePool:
        self._entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        started, self._started = self._started, []
        leaving, self._leaving = self._leaving, []
        for w in started:
            w.kill()
        if exc[0] is None:
            self._reap(leaving)
        else:  # unwinding: no polite wait
            for w in leaving:
                w.kill()

    def run(self, jobs: Iterable[ParseJob], total: int, on_result: OnResult) -> None:
        """Parse ``total`` jobs (pulled lazily from ``jobs``); ``on_result(ident, outcome)`` once per job."""
        if total <= 0:
            return
        source = iter(jobs)
        requeued: deque[ParseJob] = deque()
        started, self._started = self._started, []
        busy = [w for w in started if w.inflight]  # primed: every one of them is kept
        idle = [w for w in started if not w.inflight]
        want = max(len(busy), min(self.jobs, total))
        workers = busy + idle[: want - len(busy)]
        self._stop(idle[want - len(busy) :])
        workers += [self._spawn() for _ in range(want - len(workers))]
        remaining = total
        exhausted = False
        try:
            while remaining > 0:
                for w in workers:
                    while len(w.inflight) < 2 or (
                        len(w.inflight) < MAX_INFLIGHT and w.inflight_bytes < MAX_INFLIGHT_BYTES
                    ):
                        job = requeued.popleft() if requeued else next(source, None)
                        if job is None:
                            exhausted = True
                            break
                        w.send(job, self.timeout)
                    w.flush_early()  # now, not when the next poll says the pipe has room: a round saved
                if exhausted and not requeued and not any(w.inflight for w in workers):
                    break  # fewer jobs than announced: nothing left to wait for
                remaining -= self._step(workers, requeued, on_result)
                wait = gather_time(workers)
                if wait:
                    time.sleep(wait)  # let answers gather: one round for many, not each
        except BaseException:
            for w in workers:  # unwinding (SIGTERM, Ctrl-C, an error): no polite 2 s wait per worker
                w.kill()
            raise
        self._stop(workers)

    def _step(self, workers: list[Worker], requeued: deque[ParseJob], on_result: OnResult) -> int:
        """One poll round; returns how many jobs got their outcome."""
        now = time.monotonic()
        deadlines = [w.deadline for w in workers if w.deadline is not None]
        wait = max(0.0, min(deadlines) - now) if deadlines else 1.0
        reads = {w.rfd: w for w in workers}
        errs = {w.efd: w for w in workers if w.efd is not None}
        writes = {w.wfd: w for w in workers if w.out}
        # poll, not select: no FD_SETSIZE limit in a process that has many files open.
        poller = select.poll()
        for fd in [*reads, *errs]:
            poller.register(fd, select.POLLIN)
        for fd in writes:
            poller.register(fd, select.POLLOUT)
        events = poller.poll(wait * 1000)
        r = [
            fd
            for fd, ev in events
            if fd not in writes and ev & (select.POLLIN | select.POLLHUP | select.POLLERR)
        ]
        wr = [fd for fd, ev in events if fd in writes]
        done = 0
        broken: dict[int, Worker] = {}
        for fd in wr:
            try:
                writes[fd].flush()
            except (BrokenPipeError, ConnectionResetError):
                broken[id(writes[fd])] = writes[fd]
        for fd in r:
            if fd in errs:
                errs[fd].drain_stderr()
                continue
            w = reads[fd]
            try:
                chunk = os.read(fd, 1 << 18)
            except BlockingIOError:
                continue
            if not chunk:
                broken[id(w)] = w
                continue
            w.rbuf += chunk
            for ident, outcome in w.frames():
                if ident == HANDSHAKE_ID and not w.ready:
                    w.ready = True
                    w.arm(self.timeout)
                    continue
                if not w.inflight or w.inflight[0].ident != ident:
                    broken[id(w)] = w  # protocol violation: treat like a crash
                    break
                job = w.answered()
                w.arm(self.timeout)
                on_result(job.ident, outcome)
                done += 1
        now = time.monotonic()
        for w in workers:
            if id(w) not in broken and w.deadline is not None and now > w.deadline:
                broken[id(w)] = w
        for w in broken.values():
            done += self._replace(workers, w, requeued, on_result, timed_out=w.proc.poll() is None)
        return done

    def _replace(
        self,
        workers: list[Worker],
        w: Worker,
        requeued: deque[ParseJob],
        on_result: OnResult,
        *,
        timed_out: bool,
    ) -> int:
        """Kill ``w``, blame its head job, re-queue the rest, start a fresh worker in its place."""
        alive_before_kill = timed_out and w.deadline is not None and time.monotonic() > w.deadline
        if not alive_before_kill:
            try:  # it closed its pipe: let it finish dying so we report its own exit status
                w.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        code = w.kill()
        if not w.ready:
            detail = w.err.decode("utf-8", "replace").strip().splitlines()
            why = detail[-1] if detail else _describe_exit(code)
            raise BadInput(f"the parse worker ({self.interpreter.describe()}) failed to start: {why}")
        blamed = 0
        if w.inflight:
            head = w.inflight.popleft()
            if alive_before_kill:
                msg = f"timed out after {w.allowed:.3g} s (parser killed)"
            else:
                msg = f"parser crashed ({_describe_exit(code)})"
            on_result(head.ident, ParseOutcome(False, message=msg, cacheable=False))
            blamed = 1
        requeued.extendleft(reversed(w.inflight))
        self.restarts += 1
        workers[workers.index(w)] = self._spawn()
        return blamed

    def _stop(self, workers: list[Worker]) -> None:
        """Tell ``workers`` to quit, and reap them: now, or inside ``with`` when leaving it, so
        that their exit overlaps what the caller does after the run (it saves their outcomes)."""
        # Closing stdin is the polite quit, said to every worker before waiting for any (they
        # leave together).
        for w in workers:
            try:
                os.set_blocking(w.wfd, True)
                if w.proc.stdin:
                    w.proc.stdin.close()
            except (OSError, ValueError):
                pass
        if self._entered:
            self._leaving += workers
        else:
            self._reap(workers)

    @staticmethod
    def _reap(workers: list[Worker]) -> None:
        """Wait for workers told to quit; kill() reaps whatever does not leave at once."""
        for w in workers:
            try:
                w.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            w.kill()
