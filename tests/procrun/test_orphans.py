"""A tool that leaves its process group (``setsid`` and a double fork, as a daemonising hook
does) is out of ``killpg``'s reach: on Linux we are its subreaper for the run, and whatever it
left is ended and reaped when the run ends (normally or at the timeout), with real processes."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vimesync.procrun.orphans import PR_GET_CHILD_SUBREAPER, end_descendants, orphans_ended
from vimesync.sop.toolrun import run_tool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux subreaper")

# fork, setsid, fork again: the grandchild is in a session of its own and its parent is gone at
# once, so nothing links it to the tool any more; it writes its pid and sleeps (or, with
# "stubborn", ignores SIGTERM first). The tool then exits, or sleeps past the timeout.
ESCAPES = """
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        if sys.argv[2] == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open(sys.argv[1] + ".tmp", "w") as fh:
            fh.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(300)
    os._exit(0)
os.wait()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
if sys.argv[3] == "hang":
    time.sleep(300)
print("tool done")
"""


def _gone(pid: int) -> bool:
    """No such process at all: not running, and not a zombie left unreaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _escape(tmp_path: Path, how: str = "plain", end: str = "exit", timeout: float = 30) -> tuple[int, object]:
    pidfile = tmp_path / "pid"
    argv = [sys.executable, "-c", ESCAPES, str(pidfile), how, end]
    run = run_tool(argv, cwd=tmp_path, timeout=timeout)
    return int(pidfile.read_text()), run


def _subreaper_flag() -> int:
    flag = ctypes.c_int(-1)
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0
    return flag.value


def test_a_process_that_left_the_group_ends_with_the_run(tmp_path: Path) -> None:
    pid, run = _escape(tmp_path)
    assert getattr(run, "code", None) == 0 and getattr(run, "output", b"") == b"tool done\n"
    assert _gone(pid)  # at once: killed and reaped before run_tool returned
    assert _subreaper_flag() == 0  # the flag as it was


def test_it_ends_at_the_timeout_too(tmp_path: Path) -> None:
    started = time.monotonic()
    pid, run = _escape(tmp_path, end="hang", timeout=2)
    assert getattr(run, "stopped", "") == "took more than 2 s" and time.monotonic() - started < 10
    assert _gone(pid)


def test_one_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    started = time.monotonic()
    pid, run = _escape(tmp_path, how="stubborn")
    assert getattr(run, "code", None) == 0 and time.monotonic() - started < 10
    assert _gone(pid)


def test_our_own_children_from_before_the_run_are_left_alone(tmp_path: Path) -> None:
    ours = subprocess.Popen(["sleep", "30"])
    try:
        pid, _ = _escape(tmp_path)
        assert _gone(pid)
        assert ours.poll() is None  # still running: not the tool's
    finally:
        ours.kill()
        ours.wait()


def test_the_flag_is_restored_when_it_was_set(tmp_path: Path) -> None:
    with orphans_ended() as reaping:
        assert reaping and _subreaper_flag() == 1
        with orphans_ended():
            pass
        assert _subreaper_flag() == 1  # the inner one put back what it found
    assert _subreaper_flag() == 0


def test_ending_descendants_is_bounded(tmp_path: Path) -> None:
    """A process that comes back as fast as it is killed (here: one that ignores SIGTERM, with
    no SIGKILL within the limit) is given up on after the limit, not waited for."""
    with orphans_ended():
        stubborn = subprocess.Popen(
            [sys.executable, "-c", "import signal, time\nsignal.signal(15, signal.SIG_IGN)\ntime.sleep(60)"]
        )
        time.sleep(0.3)
        started = time.monotonic()
        found = end_descendants(grace=10, limit=0.5)
        assert found == 1 and time.monotonic() - started < 3
        assert stubborn.poll() is None  # SIGTERM ignored, SIGKILL not reached within the limit
    assert _gone(stubborn.pid)  # the context's own pass killed (SIGKILL) and reaped it
    stubborn.wait(5)  # (its status went to our reaping: Popen is told 0)
