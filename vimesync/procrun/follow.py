"""A run whose output is followed as it comes, not kept (``sop record run -- CMD``: a lab job may
write gigabytes): stdout and stderr share one pipe, each chunk goes to a ``sink`` (tee it, hash it,
keep a bounded tail) and nothing else of it stays in memory.

The same bounds and ending as :func:`vimesync.procrun.run`: its own process group started by
:func:`~vimesync.procrun.runner.start`, ended by :func:`~vimesync.procrun.runner.end` on every path
(its end, the deadline, Ctrl-C, SIGTERM), and with ``Bounds(orphans=True)`` what left the group is
ended after it. Once the job has exited its group is killed (a daemon it forked there dies with
it); what still holds the pipe then (a daemon that left the group) is read for :data:`DRAIN`
seconds at most, then left to the orphan reaper."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable

from vimesync.procrun.runner import (
    _CHUNK,
    POLL,
    Bounds,
    Command,
    ProcessRun,
    Stop,
    _exited,
    _orphans,
    _over,
    end,
    start,
)

DRAIN = 1.0  # seconds we read the pipe after the job exited (what it left may still hold it)


def follow(command: Command, bounds: Bounds, sink: Callable[[bytes], None]) -> ProcessRun:
    """Run ``command`` within ``bounds`` (its output cap is not applied: the sink bounds what is
    kept), each chunk of its output handed to ``sink`` as it is read. The run's ``output`` is empty."""
    started = time.monotonic()
    read_end, write_end = os.pipe()
    try:
        with _orphans(bounds.orphans):
            try:
                proc = start(command, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end)
            finally:
                os.close(write_end)  # ours closed: the pipe ends when the job's side does
            try:
                stop = _pump(proc, read_end, bounds, started, sink)
            finally:  # on any exit (Ctrl-C, SIGTERM too): its group goes first
                end(proc)
    finally:
        os.close(read_end)
    return ProcessRun(None if stop else proc.returncode, b"", time.monotonic() - started, stop)


def _pump(
    proc: subprocess.Popen[bytes], fd: int, bounds: Bounds, started: float, sink: Callable[[bytes], None]
) -> Stop | None:
    """Read ``fd`` until it closes (or, once the job has exited, for :data:`DRAIN` seconds more);
    why we stopped the job, or None."""
    unbounded = Bounds(timeout=bounds.timeout, max_output=None, watch=bounds.watch)
    drain_until: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if drain_until is not None and now >= drain_until:
                return None
            wait = POLL if drain_until is None else min(POLL, drain_until - now)
            if sel.select(wait):
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                sink(chunk)
            if drain_until is None:
                stop = _over(unbounded, started, 0)
                if stop is not None:
                    return stop
                if _exited(proc):
                    end(proc)  # its group killed, the job reaped: only a daemon outside it holds on
                    drain_until = time.monotonic() + DRAIN
    if drain_until is None:  # the pipe closed first: the job is ending
        from vimesync.procrun.runner import _supervise

        return _supervise(proc, unbounded, started, None)
    return None
