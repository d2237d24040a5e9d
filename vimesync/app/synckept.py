"""What the head of a sync worked out that a later run at the same head would work out again:
which applicable PRs it carries and the replay of its carry (the resolved paths). Kept beside the
sync's state, so that ``vimesync sync --continue`` at an unmoved head (the review recorded in the
ledger, CI read again) takes them instead of scanning the sync's commits and re-merging each
carried item.

Both are functions of the walk the head took (proven the head's own by
:func:`vimesync.app.syncwalk.share`, whose digest covers the upstream, the range, the config and
the policy bytes), the head, the baseline, the downstream's object store and the carry's budget:
the key is the digest of all of these. Nothing is kept or taken when the walk was not shared; a
kept file that cannot be read, or whose key is not this head's, is worked out again; never an
error. The file is as trusted as the sync's state beside it (which already says which gates held
at which head): both live in the common git dir, which no checkout and no upstream writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from vimesync import git
from vimesync.app.syncstate import HEAD_NAME as KEPT_NAME
from vimesync.app.syncwalk import Walked, kept, share
from vimesync.app.workspace import Workspace
from vimesync.carry.resolutions import Resolutions
from vimesync.check.flags import EngineFlags
from vimesync.errors import BadInput, VimesyncError
from vimesync.safefs import Range, Size, Text
from vimesync.statefile import StateFile

MAX_KEPT = 4 << 20  # the replay keeps at most 20 dropped lines per file: a few kB per item
CARRIED = "carried at head"  # the Workspace.once keys of upstreamsteps and resolved
RESOLUTIONS = "resolutions"


@dataclass
class HeadMemo:
    key: Annotated[str, Text(pattern=r"[0-9a-f]{64}", what="a sha256 digest")]
    carried: Annotated[list[Annotated[int, Range(1, 10**9 - 1)]], Size(100_000)]
    resolutions: Resolutions | None = None
    version: Literal[1] = 1


def kept_file(repo: Path) -> StateFile[HeadMemo]:
    return StateFile.of(
        repo,
        KEPT_NAME,
        HeadMemo,
        max_bytes=MAX_KEPT,
        what="kept head",
        hint="vimesync sync --abort removes it",
    )


@contextmanager
def shared(checkout: Path, ws: Workspace, walked: Walked | None, engine: EngineFlags) -> Iterator[None]:
    """The head's workspace ``ws`` given the walk step's walk (``walked``: this run's, None: the
    one an earlier run kept) when it is provably its own, what an earlier run worked out at this
    head, and the checks of the same stack (:mod:`vimesync.app.synccheck`; ``engine``: the
    sync's engine flags); what it worked out kept when its steps are over (stopped or not)."""
    from vimesync.app import synccheck

    walk = share(walked or kept(checkout), ws)
    take(checkout, ws, walk)
    taken = synccheck.take(checkout, ws, engine)
    try:
        yield
    finally:
        keep(checkout, ws, walk)
        synccheck.keep(checkout, ws, engine, taken)


def key(ws: Workspace, walk: str) -> str | None:
    """The digest of what the head's facts rest on (None: no head or baseline to key them to)."""
    from vimesync.carry.budget import Budget

    if ws.downstream is None or ws.head is None or ws.baseline is None:
        return None
    b = Budget.from_settings(ws.settings)  # its bounds, not when it started
    bounds = (b.max_bytes, b.max_matches, b.max_seconds)
    rests = f"head facts 1\n{walk}\n{ws.head}\n{ws.baseline}\n{git.object_store(ws.downstream)}\n{bounds}"
    return hashlib.sha256(rests.encode()).hexdigest()


def take(checkout: Path, ws: Workspace, walk: str | None) -> None:
    """Give ``ws`` what an earlier run kept at this head (``walk``: the digest the head's shared
    walk rests on; None: nothing is taken)."""
    want = key(ws, walk) if walk is not None else None
    if want is None:
        return
    try:
        memo = kept_file(checkout).read()
    except VimesyncError:
        return
    if memo is None or memo.key != want:
        return
    carried = frozenset(memo.carried)
    ws.once(CARRIED, lambda: carried)
    if memo.resolutions is not None:
        resolutions = memo.resolutions
        ws.once(RESOLUTIONS, lambda: resolutions)


def _none() -> None:
    return None


def keep(checkout: Path, ws: Workspace, walk: str | None) -> None:
    """Keep what ``ws`` worked out of its head for a later run (both facts, or nothing)."""
    file = kept_file(checkout)
    want = key(ws, walk) if walk is not None else None
    # what the steps worked out, else None (the workspace's steps are over: nothing asks again)
    carried, resolutions = ws.once(CARRIED, _none), ws.once(RESOLUTIONS, _none)
    if want is None or not isinstance(carried, frozenset) or not isinstance(resolutions, Resolutions):
        return
    try:
        file.save(HeadMemo(want, sorted(carried), resolutions))
    except BadInput:  # past the cap: worked out again
        file.remove()
