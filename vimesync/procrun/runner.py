"""One bounded process run, and the one way a process we started is ended (see the package).

:func:`run` sends the output to a file we created and watches it through our descriptor;
:func:`capture` reads stdout and stderr through pipes. Both start the process with :func:`start`
(its own process group) and end it with :func:`end` (the whole group killed, the process reaped),
on their normal end as on a stop or an exception: nothing the process started in its group
outlives the run. A process is never reaped before its group is killed (``waitid(WNOWAIT)``): its
pid, and so its group id, stays ours until then and cannot name another process's group."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

MAX_OUTPUT = 32 * 1024 * 1024  # bytes of a run's output (stdout and stderr together)
POLL = 0.05  # seconds between two looks at a bounded run, at most (the first ones come sooner)
_FIRST_POLL = 0.001
_CHUNK = 1 << 16
_WNOWAIT = hasattr(os, "waitid")  # Linux; elsewhere a group is killed just after its leader is reaped
# A process still running when it is ended is asked first (SIGTERM to its group) and given this
# long to leave before SIGKILL: git removes its lock files on SIGTERM, and a git killed outright
# while it held ``index.lock`` left a sync that no ``--continue`` could resume.
GRACE = 1.0  # seconds

# poll(2) as subprocess uses it: no FD_SETSIZE limit, and no epoll descriptor per run
_Selector = getattr(selectors, "PollSelector", selectors.SelectSelector)

StopKind = Literal["deadline", "output", "watch"]


@dataclass(frozen=True)
class Command:
    """What to run: an argument list (never a shell line), the folder it runs in and its whole
    environment (built from the job's snapshot: :func:`vimesync.procrun.child_env`)."""

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]


@dataclass(frozen=True)
class Bounds:
    """What one run may take. ``timeout``: seconds of wall time (None: no deadline);
    ``max_output``: bytes of output (None: no cap); ``watch``: asked at every look at the run, a
    reason it returns stops the run (pip's scratch folder over its size budget); ``orphans``: on
    Linux, what left the process group (``setsid``) is ended after the run too
    (:mod:`vimesync.procrun.orphans`; for trusted tool runs, with nothing else running)."""

    timeout: float | None = None
    max_output: int | None = MAX_OUTPUT
    watch: Callable[[], str | None] | None = None
    orphans: bool = False


UNBOUNDED = Bounds(timeout=None, max_output=None)


@dataclass(frozen=True)
class Stop:
    """Why we stopped a run: ``reason`` is a phrase after "it" ("took more than 600 s")."""

    kind: StopKind
    reason: str


@dataclass(frozen=True)
class ProcessRun:
    """How one run ended."""

    code: int | None  # its exit status (negative: the signal that ended it); None: we stopped it
    output: bytes  # stdout (a logged run: stdout and stderr interleaved), at most the cap
    seconds: float
    stop: Stop | None = None
    stderr: bytes = b""  # a captured run's stderr (within the same cap)

    @property
    def stopped(self) -> str:
        """Why we stopped it ("" when it ended by itself)."""
        return self.stop.reason if self.stop is not None else ""


def start(
    command: Command,
    *,
    stdin: int | IO[bytes] | None,
    stdout: int | IO[bytes] | None,
    stderr: int | IO[bytes] | None,
) -> subprocess.Popen[bytes]:
    """``command`` started in a session and process group of its own (so :func:`end` reaches
    all it starts), no descriptor of ours but the three given."""
    return subprocess.Popen(
        list(command.argv),
        cwd=command.cwd,
        env=command.env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        close_fds=True,
        start_new_session=True,
    )


def end(proc: subprocess.Popen[bytes], *, wait: float | None = None) -> int | None:
    """Kill ``proc``'s process group (``proc`` and whatever it started there) and reap ``proc``;
    its exit status (None: still not gone after ``wait`` seconds). The one way a process we
    started is ended, on every path: a normal end, a stop, Ctrl-C, SIGTERM. One still running is
    asked to stop first, and killed after GRACE seconds at the latest."""
    if not _exited(proc):
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            pass
        deadline = time.monotonic() + GRACE
        while not _exited(proc) and time.monotonic() < deadline:
            time.sleep(0.002)
    if proc.returncode is None or not _WNOWAIT:  # not reaped: its group id is still its own
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:  # no such group any more (or not a group leader)
            pass
    if proc.returncode is None:
        try:
            proc.kill()
        except OSError:
            pass
    try:
        return proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
        return None


def run(command: Command, bounds: Bounds, *, log: Path) -> ProcessRun:
    """Run ``command`` with stdout and stderr in ``log`` (a new file: created here, never one
    that exists), within ``bounds``; the output read back through our own descriptor."""
    started = time.monotonic()
    # Read through the file we created, never by its name again: the process can find the name
    # (/proc/self/fd/1) and put a FIFO (we would block for ever) or a symlink there.
    with open(log, "xb+") as fh:
        with _orphans(bounds.orphans):
            proc = start(command, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT)
            try:
                stop = _supervise(proc, bounds, started, lambda: os.fstat(fh.fileno()).st_size)
            finally:  # on any exit (Ctrl-C, SIGTERM too): its group goes first
                end(proc)
        fh.seek(0)
        output = fh.read(-1 if bounds.max_output is None else bounds.max_output)
    return ProcessRun(None if stop else proc.returncode, output, time.monotonic() - started, stop)


def capture(command: Command, bounds: Bounds = UNBOUNDED, *, input: bytes | None = None) -> ProcessRun:
    """Run ``command`` with ``input`` on its stdin (None: nothing, not ours) and its stdout and
    stderr read through pipes, within ``bounds``."""
    started = time.monotonic()
    with _orphans(bounds.orphans):
        pipe_in = subprocess.PIPE if input is not None else subprocess.DEVNULL
        proc = start(command, stdin=pipe_in, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err, stop = _pump(proc, bounds, started, input)
            if stop is None:  # both pipes closed: it has ended or is about to (or meets its deadline)
                stop = _supervise(proc, bounds, started, None)
        finally:
            end(proc)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    cap = len(out) + len(err) if bounds.max_output is None else bounds.max_output
    code = None if stop else proc.returncode
    return ProcessRun(code, out[:cap], time.monotonic() - started, stop, err[: max(0, cap - len(out))])


def last_line(output: bytes) -> str:
    """The last non-blank line of a run's output, for a one-line error (escaped by the caller)."""
    lines = [ln for ln in output[-4096:].decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "no output"


def _orphans(on: bool) -> AbstractContextManager[bool]:
    if not on:
        return nullcontext(False)  # and ctypes not loaded: every git call comes through here
    from vimesync.procrun.orphans import orphans_ended

    return orphans_ended()


def _over(bounds: Bounds, started: float, size: int) -> Stop | None:
    """The first bound the run has passed: its deadline, its output cap, its watch."""
    if bounds.timeout is not None and time.monotonic() - started > bounds.timeout:
        return Stop("deadline", f"took more than {bounds.timeout:g} s")
    if bounds.max_output is not None and size > bounds.max_output:
        return Stop("output", f"wrote more than {_amount(bounds.max_output)} of output")
    if bounds.watch is not None and (why := bounds.watch()):
        return Stop("watch", why)
    return None


def _amount(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size:,} bytes"


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """``proc`` has exited; where we can tell, without reaping it (see the module docstring)."""
    if proc.returncode is not None:
        return True
    if not _WNOWAIT:
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped by someone else
        return True


def _await_exit(proc: subprocess.Popen[bytes]) -> None:
    """Block until ``proc`` exits (Ctrl-C and SIGTERM still come through); where we can, without
    reaping it."""
    if not _WNOWAIT:
        proc.wait()
        return
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else
        pass


def _supervise(
    proc: subprocess.Popen[bytes], bounds: Bounds, started: float, size: Callable[[], int] | None
) -> Stop | None:
    """Wait until ``proc`` exits (not reaped) or passes a bound: why it was stopped, or None.
    ``size``: how much it has written so far (None: nothing more to count)."""
    if bounds.timeout is None and bounds.watch is None and (size is None or bounds.max_output is None):
        _await_exit(proc)  # nothing to watch: no polling (git, hundreds of times a command)
        return None
    delay = _FIRST_POLL
    while not _exited(proc):
        stop = _over(bounds, started, size() if size is not None else 0)
        if stop is not None:
            return stop
        time.sleep(delay)
        delay = min(delay * 2, POLL)
    return None


def _pump(
    proc: subprocess.Popen[bytes], bounds: Bounds, started: float, input: bytes | None
) -> tuple[bytes, bytes, Stop | None]:
    """``input`` written and stdout and stderr read until both close, or a bound is passed. Once
    the process has exited its group is ended, so what it left there holds its pipes no longer."""
    stop = None
    look = started + POLL
    with _Pipes(proc, input) as pipes:
        while pipes.open():
            pipes.step(_wait(bounds, started))
            stop = _over(bounds, started, pipes.size)
            if stop is not None:
                break
            if proc.returncode is None and time.monotonic() >= look:
                look = time.monotonic() + POLL
                if _exited(proc):
                    end(proc)
    return pipes.read(proc.stdout), pipes.read(proc.stderr), stop


class _Pipes:
    """A process's stdin fed and its stdout and stderr read, through one selector."""

    def __init__(self, proc: subprocess.Popen[bytes], input: bytes | None) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.stdin = proc.stdin
        self.todo = memoryview(input or b"")
        self.got: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
        self.size = 0
        self.sel = _Selector()
        self.sel.register(proc.stdout, selectors.EVENT_READ)
        self.sel.register(proc.stderr, selectors.EVENT_READ)
        if self.stdin is not None and self.todo:
            os.set_blocking(self.stdin.fileno(), False)
            self.sel.register(self.stdin, selectors.EVENT_WRITE)
        elif self.stdin is not None:
            self.stdin.close()

    def __enter__(self) -> _Pipes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sel.close()

    def open(self) -> bool:
        return bool(self.sel.get_map())

    def step(self, wait: float | None) -> None:
        """One wait of at most ``wait`` seconds, and what it allows: a write, reads."""
        for key, _ in self.sel.select(wait):
            if key.fileobj is self.stdin:
                self.todo = _feed(key.fd, self.todo)
                if not self.todo:
                    self.sel.unregister(self.stdin)
                    self.stdin.close()
                continue
            chunk = os.read(key.fd, _CHUNK)
            if chunk:
                self.got[key.fd].append(chunk)
                self.size += len(chunk)
            else:
                self.sel.unregister(key.fileobj)

    def read(self, pipe: IO[bytes] | None) -> bytes:
        assert pipe is not None
        return b"".join(self.got[pipe.fileno()])


def _feed(fd: int, todo: memoryview) -> memoryview:
    """What is left of ``todo`` after one write to the process's stdin (nothing: it stopped reading)."""
    try:
        return todo[os.write(fd, todo[:_CHUNK]) :]
    except BlockingIOError:
        return todo
    except (BrokenPipeError, ConnectionResetError):  # it stopped reading: its exit status says why
        return todo[:0]


def _wait(bounds: Bounds, started: float) -> float:
    """How long one wait for output may last: a poll, and never past the deadline."""
    if bounds.timeout is None:
        return POLL
    return min(POLL, max(0.0, started + bounds.timeout - time.monotonic()))
