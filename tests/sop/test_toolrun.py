"""The bounds of a tool run (``sop record precommit``, ``sop regress``), with real processes: a
hook that forks a child which keeps the output open after the hook exits, one that never stops,
one that writes without end; what they print is bytes we cut, never a crash."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from vimesync.procrun import ProcessRun
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
    run = run_tool(
        [sys.executable, "-c", LEAVES_A_CHILD, str(pidfile)], cwd=tmp_path, log=tmp_path / "log", timeout=30
    )
    assert run.code == 0 and time.monotonic() - started < 10  # not held until the timeout
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_tool_that_never_stops_is_killed_at_the_timeout(tmp_path: Path) -> None:
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(600)\ntime.sleep(600)\n"
    started = time.monotonic()
    run = run_tool([sys.executable, "-c", code], cwd=tmp_path, log=tmp_path / "log", timeout=1)
    assert run.code is None and run.stopped == "took more than 1 s" and time.monotonic() - started < 8


def test_endless_output_is_cut_at_the_cap(tmp_path: Path) -> None:
    line = "b'x....Passed\\x00\\xff\\x1b]8;;u\\x07\\n'"
    code = f"import sys\nwhile True:\n    sys.stdout.buffer.write({line} * 4096)\n"
    run = run_tool(
        [sys.executable, "-c", code], cwd=tmp_path, log=tmp_path / "log", timeout=30, max_output=1 << 20
    )
    assert run.code is None and "wrote more than 1 MiB" in run.stopped
    assert len(run.output) <= 1 << 20
    assert parse_output(run.output.decode("utf-8", "replace")) == ()  # no hook id line: no hook
    shown = one_line(last_line(run.output))  # as an error or a record shows it
    assert shown.startswith("x") and not any(c in shown for c in "\x00\x1b\x07\n")


# the tool finds its output file (/proc/self/fd/1) and puts something else at its name
REPLACES_ITS_LOG = """
import os, sys
print("what the tool printed", flush=True)
path = os.readlink("/proc/self/fd/1")
os.unlink(path)
if sys.argv[1] == "fifo":
    os.mkfifo(path)  # reopened by name, it would block us for ever, past any timeout
else:
    os.symlink(sys.argv[2], path)  # reopened by name, we would read another file
"""


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_the_output_is_read_from_our_own_file_not_its_name(tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text("a secret of the job\n")
    done: list[object] = []

    def go() -> None:
        argv = [sys.executable, "-c", REPLACES_ITS_LOG, kind, str(secret)]
        done.append(run_tool(argv, cwd=tmp_path, log=tmp_path / "log", timeout=30))

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(20)
    assert done, "reading the output blocked"
    run = done[0]
    assert isinstance(run, ProcessRun) and run.code == 0
    assert run.output == b"what the tool printed\n"
