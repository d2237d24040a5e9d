"""The worker pool survives crashes, hangs and memory hogs, and reports them against the right file."""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from tests.builders.hookworker import use_hook_worker
from vimesync.errors import BadInput
from vimesync.pycheck.channel import PIPE_BYTES, ParseJob, ParseOutcome, Worker
from vimesync.pycheck.interp import Interpreter, running
from vimesync.pycheck.pool import FAST_RATE, MAX_WAIT, MIN_WAIT, ParsePool, gather_time


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_hook_worker(monkeypatch, tmp_path)


def run(pool: ParsePool, jobs: list[ParseJob]) -> dict[int, ParseOutcome]:
    results: dict[int, ParseOutcome] = {}

    def record(ident: int, outcome: ParseOutcome) -> None:
        assert ident not in results, "one outcome per job"
        results[ident] = outcome

    pool.run(jobs, len(jobs), record)
    assert set(results) == {j.ident for j in jobs}
    return results


def sources(*texts: bytes) -> list[ParseJob]:
    return [ParseJob(i, data=t) for i, t in enumerate(texts)]


def test_many_files_over_several_workers() -> None:
    jobs = sources(*[b"x = %d\n" % i if i % 7 else b"def (:\n" for i in range(300)])
    results = run(ParsePool(running(), jobs=2), jobs)
    bad = {i for i, o in results.items() if not o.ok}
    assert bad == {i for i in range(300) if i % 7 == 0}
    assert results[0] == ParseOutcome(False, 1, 5, "SyntaxError: invalid syntax")


def test_crash_is_blamed_on_its_file_and_the_run_continues(hooks: None) -> None:
    jobs = sources(b"a = 1\n", b"# vimesync-test: crash\n", b"b = 2\n", b"c(\n", b"d = 4\n")
    pool = ParsePool(running(), jobs=1)
    results = run(pool, jobs)
    assert results[1] == ParseOutcome(False, message="parser crashed (exit code 70)", cacheable=False)
    assert [results[i].ok for i in (0, 2, 4)] == [True, True, True] and not results[3].ok
    assert pool.restarts == 1


@pytest.mark.slow
def test_hang_times_out_and_the_run_continues(hooks: None) -> None:
    jobs = sources(b"a = 1\n", b"# vimesync-test: hang\n", *[b"x = 1\n"] * 20)
    pool = ParsePool(running(), jobs=2, timeout=1.0)
    results = run(pool, jobs)
    assert results[1] == ParseOutcome(False, message="timed out after 1 s (parser killed)", cacheable=False)
    assert all(results[i].ok for i in results if i != 1)


def test_memory_is_capped(hooks: None) -> None:
    jobs = sources(b"# vimesync-test: alloc\n", b"x = 1\n")
    results = run(ParsePool(running(), jobs=1, mem_limit=1 << 30), jobs)
    assert not results[0].ok and "MemoryError" in results[0].message and results[1].ok


def test_files_are_read_by_the_worker(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = (\n")
    jobs = [ParseJob(0, file=tmp_path / "a.py"), ParseJob(1, file=tmp_path / "missing.py")]
    results = run(ParsePool(running(), jobs=1, max_size=100), jobs)
    assert results[0].line == 1 and "never closed" in results[0].message
    assert results[1].message.startswith("cannot read file")


def test_a_worker_that_cannot_start_is_bad_input(tmp_path: Path) -> None:
    broken = tmp_path / "python3.99"
    broken.write_text("#!/bin/sh\necho 'fatal: no stdlib' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(BadInput, match="failed to start: fatal: no stdlib"):
        run(ParsePool(Interpreter(str(broken), (3, 99, 0)), jobs=1), sources(b"x\n"))
    with pytest.raises(BadInput, match="cannot start the parse worker"):
        run(ParsePool(Interpreter(str(tmp_path / "nope"), (3, 99, 0)), jobs=1), sources(b"x\n"))


def test_feature_version_is_passed_to_workers() -> None:
    old = Interpreter(sys.executable, tuple(sys.version_info[:3]), feature_version=(3, 7))  # type: ignore[arg-type]
    results = run(ParsePool(old, jobs=1), sources(b"if (y := 1): pass\n"))
    assert not results[0].ok and "only supported in Python 3.8" in results[0].message


def test_fewer_jobs_than_announced_does_not_hang() -> None:
    results: dict[int, ParseOutcome] = {}
    ParsePool(running(), jobs=2).run(sources(b"x = 1\n"), 5, results.__setitem__)
    assert list(results) == [0]


def test_workers_get_a_minimal_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_for_the_test")
    dump = tmp_path / "env"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nenv > "{dump}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    here = running()
    results = run(ParsePool(Interpreter(str(wrapper), here.version), jobs=1), sources(b"x = 1\n"))
    assert results[0].ok
    assert "ghs_secret_for_the_test" not in dump.read_text() and "PATH=" in dump.read_text()


def _alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are still running (a zombie is not)."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if state not in ("Z", "X"):
            out.append(pid)
    return out


def test_workers_started_early_are_taken_by_the_run_and_spares_stopped() -> None:
    with ParsePool(running(), jobs=3) as pool:
        pool.start()
        pids = [w.proc.pid for w in pool._started]
        results = run(pool, sources(b"x = 1\n"))  # one job: one worker taken, two spare
    assert results[0].ok and len(pids) == 3 and _alive(pids) == []


def test_workers_started_early_do_not_outlive_a_failure_before_the_run() -> None:
    pool = ParsePool(running(), jobs=2)
    with pytest.raises(RuntimeError), pool:
        pool.start()
        pids = [w.proc.pid for w in pool._started]
        raise RuntimeError("the plan failed")
    assert _alive(pids) == []


def test_workers_of_a_run_inside_with_are_reaped_on_leaving_it() -> None:
    # They are told to quit when the run ends, and waited for only when the caller is done
    # (it saves the outcomes meanwhile); none is left running, none a zombie.
    with ParsePool(running(), jobs=2) as pool:
        pool.start()
        pids = [w.proc.pid for w in pool._started]
        results = run(pool, sources(b"x = 1\n", b"y = 2\n"))
        assert sorted(w.proc.pid for w in pool._leaving) == sorted(pids)
    assert results[0].ok and results[1].ok
    assert not pool._leaving and not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_workers_told_to_quit_are_killed_when_the_caller_fails_after_the_run() -> None:
    pool = ParsePool(running(), jobs=1)
    with pytest.raises(RuntimeError), pool:
        run(pool, sources(b"x = 1\n"))
        pids = [w.proc.pid for w in pool._leaving]
        raise RuntimeError("saving the outcomes failed")
    assert pids and _alive(pids) == []


def _queue(queued: int, *, unsent: bool = False) -> Worker:
    return cast(Worker, SimpleNamespace(queued=queued, out=deque([b"x"]) if unsent else deque()))


def test_the_loop_sleeps_only_while_every_worker_surely_has_work() -> None:
    # Half the time the least queued worker needs, at FAST_RATE, for what follows its file.
    assert gather_time([_queue(int(FAST_RATE * 0.02)), _queue(10 << 20)]) == pytest.approx(0.01)
    assert gather_time([_queue(10 << 20), _queue(10 << 20)]) == MAX_WAIT
    # Nothing behind the file it is on: poll, and wake on its answer.
    assert gather_time([_queue(0), _queue(10 << 20)]) == 0.0
    assert gather_time([_queue(int(FAST_RATE * MIN_WAIT)), _queue(10 << 20)]) == 0.0
    # A file the pipe has not taken whole: the worker waits for the rest of it.
    assert gather_time([_queue(10 << 20, unsent=True), _queue(10 << 20)]) == 0.0


def test_a_worker_pipe_takes_a_large_file_in_one_write() -> None:
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no pipe sizes here")
    with ParsePool(running(), jobs=1) as pool:
        pool.start()
        (w,) = pool._started
        assert fcntl.fcntl(w.wfd, fcntl.F_GETPIPE_SZ) >= min(PIPE_BYTES, _pipe_max())


def _pipe_max() -> int:
    try:
        return int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except (OSError, ValueError):
        return 0


def test_requests_the_pipe_takes_in_part_are_written_whole_and_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many requests go in one writev; one larger than the pipe (a changed file sent as bytes)
    is cut where the pipe is full, and the rest follows: every answer comes, in order."""
    monkeypatch.setattr("vimesync.pycheck.channel.IOV_MAX", 3)  # several writes even for few jobs
    big = b"x = 1\n" * ((PIPE_BYTES * 3) // 6)  # three pipes' worth: written over several polls
    texts = [b"a = %d\n" % i for i in range(40)] + [big] + [b"def (:\n", b"b = 2\n"]
    results = run(ParsePool(running(), jobs=1), sources(*texts))
    assert [o.ok for _, o in sorted(results.items())] == [True] * 41 + [False, True]


def test_responses_are_read_whole_from_a_buffer_cut_anywhere() -> None:
    """The read buffer may end inside a response (or its key): complete ones are taken, each
    only once, and the partial one waits for the rest; a caller who stops early leaves the
    untaken ones in the buffer."""
    from vimesync.pycheck.channel import KEY, RESPONSE

    keyed = ParseJob(2, file="f.py", keyed=True)
    wire = (
        RESPONSE.pack(1, 0, -1, -1, 0)
        + RESPONSE.pack(2, 0, -1, -1, 0)
        + KEY.pack(b"\x01" * 20, 5, 7, 9)
        + RESPONSE.pack(3, 1, 4, 2, 5)
        + b"oops!"
    )
    for cut in range(len(wire) + 1):
        w = SimpleNamespace(
            rbuf=bytearray(wire[:cut]), inflight=deque([ParseJob(1), keyed, ParseJob(3)]), ready=True
        )
        got = []
        for rest in (b"", wire[cut:]):  # what came first, then the rest of it
            w.rbuf += rest
            for ident, outcome in Worker.frames(cast(Worker, w)):
                got.append((ident, outcome))
                w.inflight.popleft()
        assert [i for i, _ in got] == [1, 2, 3] and w.rbuf == bytearray(), cut
        assert got[1][1].key is not None and got[1][1].key[0] == "01" * 20 and got[1][1].key[1].inode == 9
        assert got[2][1] == ParseOutcome(False, 4, 2, "oops!")
    w = SimpleNamespace(rbuf=bytearray(wire), inflight=deque([ParseJob(1), keyed, ParseJob(3)]), ready=True)
    for _ in Worker.frames(cast(Worker, w)):
        w.inflight.popleft()
        break  # a caller that stops at the first (a protocol error, say)
    assert bytes(w.rbuf) == wire[RESPONSE.size :]
