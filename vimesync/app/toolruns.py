"""What ``sop record precommit`` and ``sop regress`` share: they run repository code (hooks, test
suites), so they run only in a trusted checkout, with a program the job names (never one found
inside the checkout), for a bounded time."""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.errors import BadInput

DEFAULT_TIMEOUT = 1800.0
MAX_TIMEOUT = 24 * 3600.0


def refuse_untrusted(untrusted: bool, command: str, instead: str) -> None:
    """BadInput in an untrusted checkout (CI): ``command`` would run the pull request's code."""
    if untrusted:
        raise BadInput(
            f"{command} runs the repository's own code: refused in an untrusted checkout (CI)",
            hint=instead,
        )


def check_timeout(value: float | None, default: float = DEFAULT_TIMEOUT) -> float:
    if value is None:
        return default
    if not 0 < value <= MAX_TIMEOUT:
        raise BadInput(f"--timeout {value:g}: expected seconds from 1 to {MAX_TIMEOUT:.0f}")
    return float(value)


def program(path: Path, what: str, checkout: Path | None) -> str:
    """``path`` as a program to run: an absolute path to an executable file outside the checkout
    (the job's, not the pull request's)."""
    if not path.is_absolute():
        raise BadInput(f"{what} {str(path)[:80]!r}: expected an absolute path (the job's own program)")
    real = Path(os.path.realpath(path))
    if checkout is not None:
        inside = Path(os.path.realpath(checkout))
        if real == inside or inside in real.parents:
            raise BadInput(f"{what} {str(path)[:80]!r}: inside the checkout; name a program outside it")
    if not real.is_file() or not os.access(real, os.X_OK):
        raise BadInput(f"{what} {str(path)[:80]!r}: not an executable file")
    return str(path)


def records_text(root: Path, sync: str) -> str | None:
    """The sync's records file as it is before a tool runs (None: none yet)."""
    from vimesync.sop.records import read_records_text, records_file

    return read_records_text(records_file(root, sync), root)


def refuse_changed_records(root: Path, sync: str, before: str | None, tool: str) -> None:
    """BadInput when the records file is not what it was before ``tool`` ran: a hook or test
    (the repository's code) wrote into the checkout, and what we would add to it is not ours."""
    from vimesync.sop.records import records_file

    if records_text(root, sync) != before:
        raise BadInput(
            f"{records_file(root, sync)} changed while {tool} ran: nothing recorded",
            hint="the repository's own code wrote it; see git diff, then run again",
        )
