"""The tools ``sop record precommit`` and ``sop regress`` run (pre-commit, pytest), bounded.

They run repository code, so they run only in a trusted checkout (the use cases refuse an
untrusted one first). Even there every run goes through the one process runner
(:mod:`vimesync.procrun`) with a tool's bounds: a wall-clock timeout, after which the whole
process group is killed (a hook's children too), and an output cap (the output goes to a file in
our scratch folder, watched; past the cap the group is killed). Ctrl-C or SIGTERM while a tool
runs kills its group before the exception goes on. A process that left the group (``setsid``) is
reparented to us on Linux and ended after the run (:mod:`vimesync.procrun.orphans`). No shell:
an argument list, a fixed working folder, and an environment without the job's tokens (a test
suite has no business reading ``GITHUB_TOKEN``: names holding one of
:data:`vimesync.settings.SECRET_WORDS` are dropped)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vimesync.procrun import MAX_OUTPUT, Bounds, Command, ProcessRun, child_env, last_line, run

__all__ = ["MAX_OUTPUT", "last_line", "run_tool", "tool_env"]


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The job's environment without its secrets (names holding TOKEN, SECRET, ...), and ``extra``."""
    return child_env(extra=extra)


def run_tool(
    argv: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    max_output: int = MAX_OUTPUT,
) -> ProcessRun:
    """Run ``argv`` in ``cwd`` with its output in ``log`` (a new file in our scratch folder)."""
    command = Command(argv, cwd, env if env is not None else tool_env())
    return run(command, Bounds(timeout=timeout, max_output=max_output, orphans=True), log=log)
