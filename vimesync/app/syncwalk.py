"""One walk per ``vimesync sync``: the head's steps take the walk step's walk when it is provably
the walk they would make.

The walk step walks from the checkout, as its working tree holds the config and the policy; the
steps at the head (patches, audit, status, report) read them from the head commit, which the
carry wrote and which in CI is as hostile as the checkout. The head takes the walk only when every
input is the same: the upstream's object store and the range's shas (and the note the range
carries), the downstream's object store and the commit PRs are marked mirrored at, the values
flags set, and the bytes of the config and the policy — the blob ids of what the walk step read
(kept by a :class:`~vimesync.readers.RecordingReader` as it read them) against the blob ids of
what the head commit holds at the same place. A file outside the downstream, one not read or read
twice with two contents, or anything that does not resolve: the head walks again.

A later run of the same sync (``--continue``, another process) has no walk step of its own: the
walk step's walk is kept beside the sync's state (:class:`~vimesync.app.syncstate.WalkMemo`) with
the digest of its inputs, and the head takes it on the same proof. A kept walk that cannot be
read, or whose digest is not the head's, is walked again; none is ever an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vimesync import git
from vimesync.app import syncstate
from vimesync.app.workspace import Workspace
from vimesync.codestamp import code_stamp
from vimesync.errors import BadInput, VimesyncError
from vimesync.readers import CommitReader, RecordingReader
from vimesync.safefs import MAX_CONFIG_BYTES, lexical
from vimesync.upstream.model import WalkResult


@dataclass(frozen=True)
class WalkInputs:
    """Everything a walk's result depends on, each as a value that is equal only when it is."""

    upstream: str  # the object store
    base: str  # full shas (the null sha: from the root)
    tip: str
    note: str | None  # what the range says of its tip (in the walk's notes)
    downstream: str  # the object store
    at: str  # the commit PRs are marked mirrored at
    files: tuple[tuple[str, str], ...]  # (place under the downstream's root, blob id): config, policy
    values: tuple[object, ...]  # what flags and the config's values set beyond those bytes


def digest(inputs: WalkInputs) -> str:
    """The inputs as one value another process can compare: every field is a string, a number,
    a bool, None, a path or tuples of them, whose ``repr`` is the same in every run."""
    return hashlib.sha256(f"walk inputs 1\n{code_stamp()}\n{inputs!r}".encode()).hexdigest()


@dataclass(frozen=True)
class Walked:
    """The walk step's walk and the digest of what it rests on (None: nothing to share it on)."""

    result: WalkResult
    inputs: str | None


def walked_here(ws: Workspace, result: WalkResult, at: str) -> Walked:
    """The walk step's ``result`` (walked at ``at``) with its inputs, as ``ws``'s reader read them."""
    reader = ws.reader
    if not isinstance(reader, RecordingReader):
        return Walked(result, None)
    rng = ws.upstream_range
    inputs = _inputs(ws, result.base, result.tip, rng.note, at, reader.blob_read)
    return Walked(result, digest(inputs) if inputs is not None else None)


def keep(checkout: Path, walked: Walked) -> None:
    """Keep the walk step's walk for a later run's head (nothing when it rests on nothing
    provable, or would pass the cap: that run walks again)."""
    file = syncstate.walk_file(checkout)
    file.remove()  # an older sync's: never left standing beside this one's state
    if walked.inputs is None:
        return
    try:
        file.save(syncstate.WalkMemo(walked.inputs, walked.result))
    except BadInput:  # past the cap
        return


def kept(checkout: Path) -> Walked | None:
    """The walk an earlier run of this sync kept (None: none, or none vimesync can read)."""
    try:
        memo = syncstate.walk_file(checkout).read()
    except VimesyncError:
        return None
    return Walked(memo.result, memo.inputs) if memo is not None else None


def share(walked: Walked | None, head: Workspace) -> str | None:
    """Give ``head`` (a workspace reading the head commit) the walk step's walk (None: this run
    did not walk), when its inputs are the ones the head's walk would have; the digest of those
    inputs when given (what the head's facts rest on: :mod:`vimesync.app.synckept`), else None."""
    from vimesync.app import upstreamsteps

    if walked is None or walked.inputs is None or head.baseline is None:
        return None
    if not isinstance(head.reader, CommitReader):
        return None
    reader = head.reader

    def blob(path: Path) -> str | None:
        try:
            return git.blob_oid(reader.read(path, max_bytes=MAX_CONFIG_BYTES))
        except (BadInput, OSError):  # missing, not a file, too large: the head's walk says so
            return None

    try:
        upstream = head.require_upstream()
        rng = head.upstream_range
        if rng.base is None and not rng.explicit:
            return None  # the head's walk says there is no range
        tip = git.resolve(upstream, rng.tip)
        base = git.resolve(upstream, rng.base) if rng.base and rng.base != git.NULL_SHA else git.NULL_SHA
    except BadInput:  # the head's walk says what does not resolve
        return None
    inputs = _inputs(head, base, tip, rng.note, head.baseline, blob)
    if inputs is None or digest(inputs) != walked.inputs:
        return None
    upstreamsteps.take_walk(head, walked.result, at=head.baseline)
    return walked.inputs


def _inputs(
    ws: Workspace, base: str, tip: str, note: str | None, at: str, blob: Callable[[Path], str | None]
) -> WalkInputs | None:
    """The inputs of ``ws``'s walk of ``base..tip`` at ``at``; ``blob(path)``: the blob id of a
    file as this side read it (None: unknown). None: a file that cannot be vouched for."""
    if ws.downstream is None or ws.upstream is None:
        return None
    root = lexical(ws.downstream)
    files: list[tuple[str, str]] = []
    for what, path in (("config", ws.config.file), ("policy", ws.policy)):
        if path is None:
            continue
        here = lexical(path)
        if not here.is_relative_to(root):
            return None  # not the head commit's: read from disk, it proves nothing about the head
        oid = blob(here)
        if oid is None:
            return None
        files.append((f"{what}:{here.relative_to(root).as_posix()}", oid))
    flags, cfg = ws.flags, ws.config
    values = (
        cfg.upstream_repo,
        cfg.upstream_name,
        ws.path_map,
        flags.pr_metadata,
        flags.github,
        flags.accept_similar,
    )
    return WalkInputs(
        upstream=git.object_store(ws.upstream),
        base=base,
        tip=tip,
        note=note,
        downstream=git.object_store(ws.downstream),
        at=at,
        files=tuple(files),
        values=values,
    )
