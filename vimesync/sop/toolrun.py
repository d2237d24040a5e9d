"""The one way the ``sop`` commands run a job or a tool to its end: ``sop record run -- CMD`` (the
lab job), ``sop record precommit`` (pre-commit) and ``sop regress`` (pytest).

They run repository code, so they run only in a trusted checkout (the use cases refuse an
untrusted one first). Even there every run goes through :func:`follow_job`, over the one process
runner for followed output (:func:`vimesync.procrun.follow`): a process group of its own, a
wall-clock timeout after which the whole group is killed (a hook's children, a daemon it forked),
the same on Ctrl-C or SIGTERM before the exception goes on (the CLI then says "interrupted" or
"terminated" in one line and exits 130 or 143), and a process that left the group (``setsid``)
reparented to us on Linux and ended after the run (:mod:`vimesync.procrun.orphans`). The output
comes through a pipe, chunk by chunk, to a sink that keeps a bounded part of it: the job's log
(:class:`vimesync.sop.joblog.JobLog`: a hash and a tail), or for a tool :func:`run_tool`'s (its
first ``max_output`` bytes, the run stopped past them; or, without a cap, its tail). No shell: an
argument list, a fixed working folder, and an environment without the job's tokens (a test suite
has no business reading ``GITHUB_TOKEN``: names holding one of
:data:`vimesync.settings.SECRET_WORDS` are dropped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vimesync.procrun import MAX_OUTPUT, ProcessRun, child_env, last_line

__all__ = ["MAX_OUTPUT", "follow_job", "last_line", "run_tool", "tool_env"]

Sink = Callable[[bytes], None]


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The job's environment without its secrets (names holding TOKEN, SECRET, ...), and ``extra``."""
    return child_env(extra=extra)


def follow_job(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    sink: Sink,
    watch: Callable[[], str | None] | None = None,
) -> ProcessRun:
    """Run ``argv`` in ``cwd`` to its end, or until ``timeout`` seconds (or ``watch``) stop it,
    each chunk of its output (stdout and stderr, interleaved) handed to ``sink``."""
    from vimesync.procrun import Bounds, Command, follow

    bounds = Bounds(timeout=timeout, max_output=None, watch=watch, orphans=True)
    return follow(Command(argv, cwd, env), bounds, sink)


class _Head:
    """A sink keeping the first ``cap`` bytes; :meth:`over` says why to stop once past them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.size = 0

    def __call__(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    def over(self) -> str | None:
        if self.size <= self.cap:
            return None
        amount = f"{self.cap >> 20} MiB" if self.cap >= 1 << 20 else f"{self.cap:,} bytes"
        return f"wrote more than {amount} of output"


def run_tool(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    max_output: int | None = MAX_OUTPUT,
) -> ProcessRun:
    """Run ``argv`` in ``cwd`` (see the module); the run's ``output`` is its first ``max_output``
    bytes (past them the run is stopped), or with ``max_output=None`` its last
    :data:`vimesync.sop.joblog.TAIL_BYTES` (a test suite may print without end)."""
    env = env if env is not None else tool_env()
    if max_output is None:
        from vimesync.sop.joblog import JobLog

        log = JobLog()
        run = follow_job(argv, cwd=cwd, env=env, timeout=timeout, sink=log)
        return replace(run, output=log.kept())
    head = _Head(max_output)
    run = follow_job(argv, cwd=cwd, env=env, timeout=timeout, sink=head, watch=head.over)
    return replace(run, output=bytes(head.kept))
