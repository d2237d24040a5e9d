"""What a run leaves behind when it leaves its process group: a hook or test that calls
``setsid()`` (or double-forks into a new session) is out of reach of ``killpg`` and would keep
running after ``vimesync`` exits (``Bounds(orphans=True)``: trusted tool runs).

On Linux our process is a child subreaper while such a run goes on (``prctl(PR_SET_CHILD_SUBREAPER)``):
an orphaned descendant is reparented to us, not to init, so after the run (its normal end, a
timeout, Ctrl-C, SIGTERM) every process below us that was not our child before the run is found
(``/proc/*/stat``: ppid chains) and ended: SIGTERM, a short grace, then SIGKILL, and reaped
(``waitpid``) so no zombie is left. The flag is restored afterwards. Elsewhere, or where
``prctl`` fails, nothing changes: the process group is all a run can reach."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
GRACE = 1.0  # seconds between SIGTERM and SIGKILL
LIMIT = 5.0  # seconds we spend ending them, at most (a process forking as fast as we kill)
_POLL = 0.02


@contextmanager
def orphans_ended() -> Iterator[bool]:
    """The block runs with our process a child subreaper; on leaving it (however), every new
    descendant is ended and reaped and the flag restored. Yields whether we are a subreaper."""
    previous = _subreaper(True)
    if previous is None:
        yield False
        return
    ours = frozenset(pid for pid, (ppid, _) in _processes().items() if ppid == os.getpid())
    try:
        yield True
    finally:
        try:
            end_descendants(ours)
        finally:
            _subreaper(previous)


def _subreaper(on: bool) -> bool | None:
    """Set the flag; the value it had (None: not Linux, or prctl failed)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    had = ctypes.c_int(0)
    if prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(had), 0, 0, 0) != 0:
        return None
    if prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        return None
    return bool(had.value)


def end_descendants(ours: frozenset[int] = frozenset(), *, grace: float = GRACE, limit: float = LIMIT) -> int:
    """SIGTERM every descendant of this process not below ``ours`` (our children before the
    run), SIGKILL those still there after ``grace``; reap each that is our child. Returns how
    many were found; gives up after ``limit`` seconds (bounded, whatever they do)."""
    me = os.getpid()
    start = time.monotonic()
    seen: set[int] = set()
    while True:
        tree = _descendants(me, ours)
        for pid, (ppid, _) in tree.items():
            if ppid == me:
                _reap(pid)
        live = [pid for pid, (_, state) in tree.items() if state != "Z"]
        seen.update(tree)
        elapsed = time.monotonic() - start
        if not tree or elapsed > limit:
            return len(seen)
        sig = signal.SIGTERM if elapsed < grace else signal.SIGKILL
        for pid in live:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(_POLL)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not ours (any more), or reaped by its Popen
        pass


def _descendants(root: int, ours: frozenset[int]) -> dict[int, tuple[int, str]]:
    """Every process below ``root`` (pid -> (ppid, state)), not entering ``ours``."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, tuple[int, str]] = {}
    todo = [p for p in children.get(root, []) if p not in ours]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = procs[pid]
        todo.extend(children.get(pid, []))
    return out


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, state) of every process /proc shows (empty without /proc)."""
    out: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read(4096)
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold ") ", so split after the last one
        fields = stat.rsplit(b")", 1)[-1].split()
        if len(fields) >= 2 and fields[1].isdigit():
            out[int(name)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return out
