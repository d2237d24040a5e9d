"""A followed run (``procrun.follow``, for ``sop record run -- CMD``): its output reaches the sink
as it comes and is not kept; the deadline stops it; a process that left its group and still holds
the pipe does not keep us waiting, and is ended with the run. Real processes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from vimesync.procrun import Bounds, Command, follow

PY = sys.executable


def _command(code: str, tmp_path: Path) -> Command:
    return Command([PY, "-c", code], tmp_path, dict(os.environ))


def test_output_reaches_the_sink_in_order_and_is_not_kept(tmp_path: Path) -> None:
    got: list[bytes] = []
    code = "import sys\nfor i in range(3000): print(i, flush=True)\nsys.stderr.write('err\\n')\nsys.exit(3)"
    run = follow(_command(code, tmp_path), Bounds(timeout=60, max_output=10), got.append)
    text = b"".join(got).decode()
    assert run.code == 3 and run.output == b"" and run.stop is None
    assert text.splitlines()[:3] == ["0", "1", "2"] and text.endswith("2999\nerr\n")  # the cap is the sink's


def test_the_deadline_stops_the_run(tmp_path: Path) -> None:
    started = time.monotonic()
    run = follow(_command("import time; time.sleep(60)", tmp_path), Bounds(timeout=0.5), lambda b: None)
    assert run.code is None and run.stop is not None and run.stop.kind == "deadline"
    assert time.monotonic() - started < 10


def test_a_daemon_holding_the_pipe_is_drained_briefly_then_ended(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"  # holds our stdout
        f"open({str(pid)!r}, 'w').write(str(p.pid))\n"
    )
    started = time.monotonic()
    run = follow(_command(code, tmp_path), Bounds(timeout=60, orphans=True), lambda b: None)
    assert run.code == 0 and time.monotonic() - started < 10
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid.read_text()}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid.read_text()}")
