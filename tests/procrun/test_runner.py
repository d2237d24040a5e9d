"""The one process runner, with real processes: a forking child ended with its group, endless
output cut at the cap, a deadline, a watch, Ctrl-C and SIGTERM mid-run leaving nothing behind,
and a child environment built from the settings snapshot (no token reaches it)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vimesync import procrun
from vimesync.errors import Terminated
from vimesync.procrun import Bounds, Command, ProcessRun, capture, run
from vimesync.settings import Settings, install

# forks a child that writes its pid, then keeps writing and sleeping; the parent writes its own
# pid and exits at once (argv: pidfile, then "hang" to sleep instead of exiting)
FORKS = """
import os, sys, time
pidfile = sys.argv[1]
child = os.fork()
if child == 0:
    while True:
        sys.stdout.write("child still here\\n"); sys.stdout.flush(); time.sleep(0.05)
with open(pidfile + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child}")
os.rename(pidfile + ".tmp", pidfile)
print("parent done", flush=True)
if sys.argv[2:] == ["hang"]:
    time.sleep(300)
"""
# closes its output (and so does the child it forks), writes both pids, and sleeps
QUIET_AND_HANGING = """
import os, sys, time
os.close(1); os.close(2)
child = os.fork()
if child == 0:
    time.sleep(300)
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""
ENDLESS = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'x' * 65536)\n"
ENV_NAMES = "import json, os\nprint(json.dumps(sorted(os.environ)))"


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (an orphan init has not reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _pids(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


def _all_gone(pids: list[int], within: float = 5.0) -> bool:
    """Every one dead within ``within`` seconds (SIGKILL is sent at once; dying takes a turn of
    the scheduler on a busy machine)."""
    deadline = time.monotonic() + within
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(_alive(p) for p in pids)


def _python(tmp_path: Path, code: str, *args: str) -> Command:
    return Command([sys.executable, "-c", code, *args], tmp_path, procrun.child_env())


Runner = Callable[[Command, Bounds, Path], ProcessRun]


def _logged(command: Command, bounds: Bounds, tmp_path: Path) -> ProcessRun:
    return run(command, bounds, log=tmp_path / "log")


def _captured(command: Command, bounds: Bounds, tmp_path: Path) -> ProcessRun:
    return capture(command, bounds)


RUNNERS = pytest.mark.parametrize("runner", [_logged, _captured], ids=["run", "capture"])
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and process groups")


@RUNNERS
def test_a_forking_child_ends_with_its_group(tmp_path: Path, runner: Runner) -> None:
    """The process exits at once; the child it left in its group (holding the output open,
    writing) is killed when the run ends, not waited for."""
    pidfile = tmp_path / "pids"
    started = time.monotonic()
    done = runner(_python(tmp_path, FORKS, str(pidfile)), Bounds(timeout=30), tmp_path)
    assert done.code == 0 and done.stop is None and time.monotonic() - started < 10
    assert b"parent done" in done.output
    assert _all_gone(_pids(pidfile))  # killed, and the leader reaped, before we returned


@RUNNERS
def test_endless_output_is_cut_at_the_cap(tmp_path: Path, runner: Runner) -> None:
    done = runner(_python(tmp_path, ENDLESS), Bounds(timeout=30, max_output=1 << 20), tmp_path)
    assert done.code is None and done.stop == procrun.Stop("output", "wrote more than 1 MiB of output")
    assert done.stopped == "wrote more than 1 MiB of output"
    assert 0 < len(done.output) <= 1 << 20


def test_a_small_cap_is_named_in_bytes(tmp_path: Path) -> None:
    done = capture(_python(tmp_path, ENDLESS), Bounds(timeout=30, max_output=4096))
    assert done.stopped == "wrote more than 4,096 bytes of output" and len(done.output) <= 4096


@pytest.mark.slow
@RUNNERS
def test_the_deadline_stops_the_whole_group(tmp_path: Path, runner: Runner) -> None:
    pidfile = tmp_path / "pids"
    started = time.monotonic()
    done = runner(_python(tmp_path, FORKS, str(pidfile), "hang"), Bounds(timeout=1), tmp_path)
    assert done.code is None and done.stop == procrun.Stop("deadline", "took more than 1 s")
    assert time.monotonic() - started < 8
    assert _all_gone(_pids(pidfile))


def test_a_watch_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    flag = tmp_path / "too-big"
    code = f"import pathlib, time\npathlib.Path({str(flag)!r}).write_text('x')\ntime.sleep(300)"
    bounds = Bounds(timeout=30, watch=lambda: "grew past its budget" if flag.exists() else None)
    done = run(_python(tmp_path, code), bounds, log=tmp_path / "log")
    assert done.code is None and done.stop == procrun.Stop("watch", "grew past its budget")


def test_an_exit_status_and_separate_streams(tmp_path: Path) -> None:
    code = "import sys\nsys.stdout.write('out'); sys.stderr.write('err'); sys.exit(3)"
    done = capture(_python(tmp_path, code))
    assert (done.code, done.output, done.stderr, done.stop) == (3, b"out", b"err", None)
    logged = run(_python(tmp_path, code), Bounds(timeout=30), log=tmp_path / "log")
    assert (logged.code, sorted(logged.output)) == (3, sorted(b"outerr"))


def test_input_larger_than_a_pipe_goes_through(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)  # far more than a pipe holds: written as the process reads
    code = "import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"
    assert capture(_python(tmp_path, code), input=data).output == data[::-1]
    # one that stops reading early: its exit status says so, and we do not hang
    quits = capture(_python(tmp_path, "import sys\nsys.stdin.buffer.read(10)\nsys.exit(4)"), input=data)
    assert quits.code == 4
    # no input: stdin is empty, never ours
    assert capture(_python(tmp_path, "import sys\nprint(repr(sys.stdin.read()))")).output == b"''\n"


def test_the_log_is_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "log").write_text("someone else's")
    with pytest.raises(FileExistsError):
        run(_python(tmp_path, "print(1)"), Bounds(timeout=30), log=tmp_path / "log")


@pytest.fixture
def raise_on_sigterm() -> Iterator[None]:
    """SIGTERM raises Terminated, as the CLI boundary makes it for the length of a command."""

    def handler(signum: int, frame: object) -> None:
        raise Terminated(signum)

    saved = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved)


def _signal_once_started(pidfile: Path, sig: signal.Signals) -> threading.Thread:
    def go() -> None:
        deadline = time.monotonic() + 20
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), sig)  # delivered to the main thread, blocked in the runner

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
@RUNNERS
@pytest.mark.parametrize(
    ("sig", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)], ids=["int", "term"]
)
def test_ctrl_c_or_sigterm_mid_run_leaves_nothing_behind(
    tmp_path: Path, runner: Runner, sig: signal.Signals, raised: type[BaseException], raise_on_sigterm: None
) -> None:
    pidfile = tmp_path / "pids"
    thread = _signal_once_started(pidfile, sig)
    started = time.monotonic()
    with pytest.raises(raised):
        runner(_python(tmp_path, FORKS, str(pidfile), "hang"), Bounds(timeout=60), tmp_path)
    thread.join(5)
    assert time.monotonic() - started < 20
    assert _all_gone(_pids(pidfile))  # the process and the child it left: before the exception went on


@pytest.mark.slow
def test_ctrl_c_while_an_unbounded_run_waits_for_its_exit(tmp_path: Path) -> None:
    """As git runs (no deadline, no cap): a process that closed its output and goes on is waited
    for without polling, and Ctrl-C still ends it and its group."""
    pidfile = tmp_path / "pids"
    thread = _signal_once_started(pidfile, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        capture(_python(tmp_path, QUIET_AND_HANGING, str(pidfile)))
    thread.join(5)
    assert _all_gone(_pids(pidfile))


def test_a_token_in_the_job_never_reaches_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = {
        "PATH": os.environ.get("PATH", os.defpath),
        "GITHUB_TOKEN": "ghp_secret",
        "BUILDKITE_API_TOKEN": "bk",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "PGPASSWORD": "pg",
        "LANG": "C.UTF-8",
    }
    monkeypatch.setenv("SET_AFTER_THE_SNAPSHOT", "1")  # the snapshot is what children get
    with install(Settings.of(job)):
        done = capture(_python(tmp_path, ENV_NAMES))
    names = set(json.loads(done.output))
    assert {"PATH", "LANG"} <= names
    assert not names & {"GITHUB_TOKEN", "BUILDKITE_API_TOKEN", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD"}
    assert "SET_AFTER_THE_SNAPSHOT" not in names


# holds a lock file as git does (``index.lock``), removes it when asked to stop (SIGTERM), and
# hangs; with "deaf" it ignores SIGTERM instead
LOCKS = """
import os, signal, sys, time
lock, pidfile = sys.argv[1], sys.argv[2]
def leave(signum, frame):
    os.unlink(lock)
    sys.exit(128 + signum)
signal.signal(signal.SIGTERM, signal.SIG_IGN if sys.argv[3:] == ["deaf"] else leave)
open(lock, "x").close()
with open(pidfile + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.rename(pidfile + ".tmp", pidfile)
time.sleep(300)
"""


@pytest.mark.slow
@RUNNERS
def test_an_interrupted_run_lets_the_process_remove_its_lock(tmp_path: Path, runner: Runner) -> None:
    """Ctrl-C mid-run: the process is asked to stop before it is killed, so a git holding
    ``index.lock`` removes it, and the next command does not find the repository locked."""
    lock, pidfile = tmp_path / "index.lock", tmp_path / "pids"
    thread = _signal_once_started(pidfile, signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        runner(_python(tmp_path, LOCKS, str(lock), str(pidfile)), Bounds(timeout=60), tmp_path)
    thread.join(5)
    assert _all_gone(_pids(pidfile)) and not lock.exists()


@pytest.mark.slow
def test_a_process_that_will_not_stop_is_killed_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vimesync.procrun import runner as runner_module

    monkeypatch.setattr(runner_module, "GRACE", 0.3)
    lock, pidfile = tmp_path / "index.lock", tmp_path / "pids"
    thread = _signal_once_started(pidfile, signal.SIGINT)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        capture(_python(tmp_path, LOCKS, str(lock), str(pidfile), "deaf"), Bounds(timeout=60))
    thread.join(5)
    assert _all_gone(_pids(pidfile)) and time.monotonic() - started < 20
    assert lock.exists()  # it would not leave: killed, as before, its lock where it was
