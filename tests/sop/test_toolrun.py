"""The bounds of a tool run (``sop record precommit``, ``sop regress``), with real processes: a
hook that forks a child which keeps the output open after the hook exits, one that never stops,
one that writes without end; what they print is bytes we cut, never a crash."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from vimesync.sop.precommit import one_line, parse_output
from vimesync.sop.toolrun import last_line, run_tool

# a "hook" that leaves a child behind in its process group, writing, and exits at once
LEAVES_A_CHILD = """
import os, sys, time
pid = os.fork()
if pid == 0:
    while True:
        sys.stdout.write("child still here\\n"); sys.stdout.flush(); time.sleep(0.05)
open(sys.argv[1], "w").write(str(pid))
print("parent done")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie not reaped yet is dead too
        return f.read().split(") ", 1)[1][0] != "Z"


def test_a_child_left_behind_is_killed_with_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    run = run_tool([sys.executable, "-c", LEAVES_A_CHILD, str(pidfile)], cwd=tmp_path, timeout=30)
    assert run.code == 0 and time.monotonic() - started < 10  # not held until the timeout
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_tool_that_never_stops_is_killed_at_the_timeout(tmp_path: Path) -> None:
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(600)\ntime.sleep(600)\n"
    started = time.monotonic()
    run = run_tool([sys.executable, "-c", code], cwd=tmp_path, timeout=1)
    assert run.code is None and run.stopped == "took more than 1 s" and time.monotonic() - started < 8


def test_endless_output_is_cut_at_the_cap(tmp_path: Path) -> None:
    line = "b'x....Passed\\x00\\xff\\x1b]8;;u\\x07\\n'"
    code = f"import sys\nwhile True:\n    sys.stdout.buffer.write({line} * 4096)\n"
    run = run_tool([sys.executable, "-c", code], cwd=tmp_path, timeout=30, max_output=1 << 20)
    assert run.code is None and "wrote more than 1 MiB" in run.stopped
    assert len(run.output) <= 1 << 20
    assert parse_output(run.output.decode("utf-8", "replace")) == ()  # no hook id line: no hook
    shown = one_line(last_line(run.output))  # as an error or a record shows it
    assert shown.startswith("x") and not any(c in shown for c in "\x00\x1b\x07\n")


def test_without_a_cap_only_the_tail_is_kept_and_the_run_goes_on(tmp_path: Path) -> None:
    """``sop regress``'s pytest: a suite printing 48 MiB is not stopped (today's cap is 32 MiB),
    and what stays in memory is the tail of its output."""
    code = (
        "import os\nfor i in range(48):\n    os.write(1, b'.' * (1 << 20))\nos.write(1, b'\\nlast line\\n')\n"
    )
    run = run_tool([sys.executable, "-c", code], cwd=tmp_path, timeout=60, max_output=None)
    assert run.code == 0 and run.stop is None
    assert len(run.output) <= 64 * 1024 and run.output.endswith(b"last line\n")
    assert last_line(run.output) == "last line"
