"""THE process runner: every child process we run to its end goes through :func:`run` (output to
a file we own: pip), :func:`follow` (output through a pipe to a sink, not kept: the jobs and tools
of ``sop``, :mod:`vimesync.sop.toolrun`) or :func:`capture` (output through pipes: git,
interpreter probes), so each has the same bounds and the same interrupt handling.

- An explicit argument list (no shell), folder and environment (:class:`Command`); the
  environment is built from the job's settings snapshot (:func:`child_env`; git builds its own
  from the same snapshot, :mod:`vimesync.git.disarm`).
- A process group of its own; one deadline, one output cap and an optional watch
  (:class:`Bounds`); why a run was stopped is data (:class:`Stop` in :class:`ProcessRun`).
- A job's output followed as it comes, not kept (:func:`follow`: ``sop record run -- CMD``,
  ``sop regress``, ``sop record precommit``).
- Its whole group killed and the process reaped (:func:`end`) when the run ends, when a bound
  is passed, and on Ctrl-C (KeyboardInterrupt) or SIGTERM (:class:`vimesync.errors.Terminated`)
  before the exception goes on; one still running is sent SIGTERM first and killed after a
  second at most (git removes its lock files then); for a trusted tool run, what left the group is ended too
  (:mod:`vimesync.procrun.orphans`).

Long-lived processes we talk to over pipes (git ``cat-file --batch``/``fast-import``/``log``
streams, the parse workers) are started with :func:`start` and ended with :func:`end` by their
owners, whose loops are the conversation itself.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from vimesync.procrun.follow import follow
from vimesync.procrun.runner import (
    MAX_OUTPUT,
    UNBOUNDED,
    Bounds,
    Command,
    ProcessRun,
    Stop,
    StopKind,
    capture,
    end,
    last_line,
    run,
    start,
)


def child_env(
    *,
    allow: Collection[str] | None = None,
    prefixes: tuple[str, ...] = (),
    secrets: bool = False,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The base environment of a child process, from the snapshot the CLI installed (see
    :meth:`vimesync.settings.Settings.child_env`: secrets dropped unless ``secrets``)."""
    from vimesync.settings import installed

    return installed().child_env(allow=allow, prefixes=prefixes, secrets=secrets, extra=extra)


__all__ = [
    "MAX_OUTPUT",
    "UNBOUNDED",
    "Bounds",
    "Command",
    "ProcessRun",
    "Stop",
    "StopKind",
    "capture",
    "child_env",
    "end",
    "follow",
    "last_line",
    "run",
    "start",
]
