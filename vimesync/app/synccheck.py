"""The patch stack's check of a sync's head, kept for a later run of the same sync: ``--continue``
after the audit's review (committed or not) or after CI moved on judges a head whose stack, pins
and config are the same bytes, and took a second check of 2,574 files (0.5 s warm) to say so.

A check is kept with what it rests on: its options (the engine, the source and its digest or
full sha, the strip, the applier, the grammar; every value but the reader), and the state of every
path of the head commit asked about while it ran (the config, the pins, the series, each patch;
found or not) as the head's reader saw them. A later run's head takes it when its own options are
equal and its commit holds the same at each of those paths: one lookup each in the listing the
reader has already made. Nothing is kept for a source that is no exact pin (a folder, an archive
without a verified digest: its files can change under the same options) or when a path outside
the commit was read (a ``--series`` from disk). The file is as trusted as the sync's state beside
it (which already says which gates held at which head): the common git dir, which no checkout
and no upstream writes. A kept check that cannot be read is checked again; never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from vimesync.app.syncstate import CHECK_NAME
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.check.model import CheckReport
from vimesync.codestamp import code_stamp
from vimesync.errors import BadInput, VimesyncError
from vimesync.pycheck.interp import search_env
from vimesync.readers import CommitReader
from vimesync.safefs import CONTROL, Size, Text
from vimesync.statefile import StateFile

if TYPE_CHECKING:
    from vimesync.check.model import CheckOptions

MAX_KEPT = 4 << 20  # a check's report of a 2,574-file tree and 4 patches is 6 kB
MAX_ASKED = 10_000  # paths a check asked about: more, and nothing is kept

Digest = Annotated[str, Text(pattern=r"[0-9a-f]{64}", what="a sha256 digest")]
RelPath = Annotated[str, Text(min=1, max=4096, forbid=CONTROL, what="a path")]


@dataclass
class KeptCheck:
    key: Digest  # the options and the state of ``asked`` at the head it ran at
    asked: Annotated[list[RelPath], Size(MAX_ASKED)]
    report: CheckReport


@dataclass
class KeptChecks:
    checks: Annotated[list[KeptCheck], Size(32)]  # one per engine
    version: Literal[1] = 1


def kept_file(repo: Path) -> StateFile[KeptChecks]:
    return StateFile.of(
        repo,
        CHECK_NAME,
        KeptChecks,
        max_bytes=MAX_KEPT,
        what="kept check",
        hint="vimesync sync --abort removes it",
    )


def _key(opts: CheckOptions, asked: list[str], reader: CommitReader) -> str:
    values = tuple(
        (f.name, getattr(opts, f.name))
        for f in dataclasses.fields(opts)
        if f.name not in ("reader", "cache_dir", "pip_timeout")  # where it reads, not what
    )
    held = tuple((rel, reader.state(rel)) for rel in asked)
    found = tuple(sorted(search_env().items()))  # which interpreters the parse may find
    return hashlib.sha256(f"check 1\n{code_stamp()}\n{found!r}\n{values!r}\n{held!r}".encode()).hexdigest()


def _plan(ws: Workspace, engine: EngineFlags) -> tuple[CheckOptions, ...]:
    """The checks the patches step runs at this head (none when they cannot be planned: the
    step says why itself)."""
    if not ws.config.engines or not isinstance(ws.reader, CommitReader):
        return ()
    try:
        return ws.engine_plan(engine, require_exact=True)
    except VimesyncError:
        return ()


Taken = dict[int, KeptCheck]  # the plan's index -> the kept check it took


def take(checkout: Path, ws: Workspace, engine: EngineFlags) -> Taken:
    """Give ``ws`` each check an earlier run kept whose options and head files are its own; the
    ones taken (kept again as they are: this run's reader never asked the check's paths)."""
    plan = _plan(ws, engine)
    if not plan:
        return {}
    try:
        kept = kept_file(checkout).read()
    except VimesyncError:
        return {}
    if kept is None:
        return {}
    assert isinstance(ws.reader, CommitReader)
    reader, taken = ws.reader, {}
    for i, opts in enumerate(plan):
        for k in kept.checks:
            if _key(opts, k.asked, reader) == k.key:
                ws.once(("check", opts), _given(k.report))
                taken[i] = k
                break
    return taken


def _given(report: CheckReport) -> Callable[[], CheckReport]:
    return lambda: report


def _none() -> None:
    return None


def keep(checkout: Path, ws: Workspace, engine: EngineFlags, taken: Taken) -> None:
    """Keep the checks ``ws`` ran (with every path its reader was asked) or took (as they were
    kept); its steps are over: nothing asks it again."""
    plan = _plan(ws, engine)
    reader = ws.reader
    if not plan or not isinstance(reader, CommitReader):
        return
    asked = sorted(reader.asked)
    sound = not reader.asked_outside and len(asked) <= MAX_ASKED
    sound = sound and not any(not rel or any(c < " " or c == "\x7f" for c in rel) for rel in asked)
    checks: list[KeptCheck] = []
    for i, opts in enumerate(plan):
        report = ws.once(("check", opts), _none)
        if i in taken:
            checks.append(taken[i])
        elif sound and isinstance(report, CheckReport) and report.exact_pin:
            checks.append(KeptCheck(_key(opts, asked, reader), asked, report))
    if not checks:
        kept_file(checkout).remove()  # none to take (what an earlier run kept is no longer sure)
        return
    try:
        kept_file(checkout).save(KeptChecks(checks))
    except BadInput:  # past the cap: checked again
        kept_file(checkout).remove()
