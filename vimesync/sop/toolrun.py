"""The tools ``sop record precommit`` and ``sop regress`` run (pre-commit, pytest), bounded.

They run repository code, so they run only in a trusted checkout (the use cases refuse an
untrusted one first). Even there every run is bounded: a wall-clock timeout, after which the
whole process group is killed (a hook's children too), and an output cap (the output goes to a
file in our scratch folder, watched; past the cap the group is killed). Ctrl-C or SIGTERM while
a tool runs kills its group before the exception goes on. A process that left the group
(``setsid``) is reparented to us on Linux and ended after the run (:mod:`vimesync.sop.orphans`).
No shell: an argument list, a fixed
working folder, and an environment without the job's tokens (a test suite has no business
reading ``GITHUB_TOKEN``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT = 32 * 1024 * 1024  # bytes of a tool's stdout and stderr, together
_POLL = 0.05
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


@dataclass(frozen=True)
class ToolRun:
    code: int | None  # None: stopped (see ``stopped``)
    output: bytes  # stdout and stderr, interleaved, at most MAX_OUTPUT bytes
    seconds: float
    stopped: str = ""  # why it was killed: "took more than 600 s", "wrote more than 32 MiB"


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The job's environment without its secrets (names holding TOKEN, SECRET, ...)."""
    env = {k: v for k, v in os.environ.items() if not any(w in k.upper() for w in _SECRET_WORDS)}
    env.update(extra or {})
    return env


def run_tool(
    argv: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    max_output: int = MAX_OUTPUT,
) -> ToolRun:
    """Run ``argv`` in ``cwd`` with its output in ``log`` (a new file in our scratch folder)."""
    from vimesync.sop.orphans import orphans_ended

    start = time.monotonic()
    # Watched and read through the file we created, never by its name again: the tool can find
    # the name (/proc/self/fd/1) and put a FIFO (we would block for ever) or a symlink there.
    with open(log, "xb+") as fh:
        with orphans_ended():  # what left its group (setsid) ends too, on any exit, before we read
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env if env is not None else tool_env(),
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: a timeout kills the hooks it started too
            )
            try:
                why = _watch(proc, fh.fileno(), start + timeout, timeout, max_output)
            except BaseException:  # Ctrl-C, SIGTERM (errors.Terminated): the tool goes first
                _kill(proc)
                raise
        fh.seek(0)
        output = fh.read(max_output)
    return ToolRun(None if why else proc.returncode, output, time.monotonic() - start, why or "")


def _watch(proc: subprocess.Popen[bytes], log: int, deadline: float, timeout: float, cap: int) -> str | None:
    while proc.poll() is None:
        why = None
        if time.monotonic() > deadline:
            why = f"took more than {timeout:g} s"
        elif os.fstat(log).st_size > cap:
            why = f"wrote more than {cap >> 20} MiB of output"
        if why is not None:
            _kill(proc)
            return why
        time.sleep(_POLL)
    _kill(proc)  # what it left running in its group (a daemonised hook) goes with it
    return None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def last_line(output: bytes) -> str:
    """The last non-blank line of a tool's output, for a one-line error (escaped by the caller)."""
    lines = [ln for ln in output[-4096:].decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "no output"
