"""Two sections of the bot's dashboard, read as the commands that own them read them:

- the engine patches whose named upstream PR merged: the report's Engine patches table of each
  engine's series (:func:`vimesync.app.steps.engine_from_series`) with its engine PRs' state
  (:func:`vimesync.app.enginestate.with_upstream_state`: the GitHub client and its ETag cache,
  bounded); without a token, or when GitHub cannot be reached, "not checked" and why;
- the evidence gone stale: the sync PR's records (``sop/records/<sync>.toml`` at the PR's head)
  read as ``sop status`` reads them (:class:`vimesync.sop.resultmodel.Evidence`, bound to the
  head's evidence head): those not at it.

Nothing here echoes what it read in an error: a part that cannot be read is said in our words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vimesync import git
from vimesync.app.workspace import Workspace
from vimesync.bot.model import MergedPatch, StaleRecord
from vimesync.errors import VimesyncError

if TYPE_CHECKING:
    from vimesync.report.radar import GitPin

MAX_PATCHES = 200  # patches read per engine for the dashboard (the report asks about at most 50 PRs)


def merged_patches(ws: Workspace) -> tuple[tuple[MergedPatch, ...], str | None]:
    """Each engine patch whose header names an engine PR that merged, and whether the engine pin
    holds the merge; and why some were not asked about (None: all were). The bot's workspace
    reads no engine pin (walk and carry need none): this reads them, as the sync's steps do."""
    try:
        with Workspace.resolve(ws.flags, ws.settings, cwd=ws.cwd) as full:
            return _merged(full)
    except VimesyncError:
        return (), "the engine pins could not be read"


def _merged(ws: Workspace) -> tuple[tuple[MergedPatch, ...], str | None]:
    from vimesync.app.enginestate import with_upstream_state
    from vimesync.app.steps import engine_from_series
    from vimesync.report.model import EnginePatches, Skipped

    found: list[MergedPatch] = []
    why: list[str] = []
    for pin in ws.config.engines:
        if pin.series is None:
            continue
        try:
            series = engine_from_series(ws, pin.series, strip=pin.strip, pin=pin)
            table = with_upstream_state(ws, series, Skipped(""), git_pin=_git_pin(pin.source, pin.rev))
        except VimesyncError:
            why.append(f"the patch series of {pin.name or 'the engine'} could not be read")
            continue
        if not isinstance(table, EnginePatches):
            continue
        if table.upstream_not_checked:
            why.append(table.upstream_not_checked)
        for row in table.rows[:MAX_PATCHES]:
            for ref in row.upstream:
                if ref.state == "merged":
                    found.append(MergedPatch(table.engine, row.name, ref.ref.text, ref.in_pin))
                elif ref.state == "unknown" and ref.why and not table.upstream_not_checked:
                    why.append(ref.why)
    return tuple(found), ("; ".join(dict.fromkeys(why)) or None)


def _git_pin(source: Path | None, rev: str | None) -> GitPin | None:
    """The engine pin as a git commit when its source is a repository here (as ``pin radar``)."""
    from vimesync.report.radar import GitPin

    if source is None or rev is None or git.repo_at(source) is None:
        return None
    try:
        return GitPin(source, git.resolve(source, rev))
    except VimesyncError:
        return None


def stale_records(ws: Workspace, head: str | None, sync: str) -> tuple[tuple[StaleRecord, ...], str | None]:
    """The records of ``sync`` at the sync PR's ``head`` not made at its evidence head; or why
    there is nothing to list (no PR, the head not in this checkout, no records)."""
    from vimesync.safefs import MAX_CONFIG_BYTES
    from vimesync.sop.binding import evidence_head
    from vimesync.sop.records import records_file
    from vimesync.sop.resultmodel import Evidence, key_of
    from vimesync.sop.results import parse_results

    if head is None:
        return (), "No sync PR is open."
    checkout = ws.require_downstream().absolute()
    if not git.run_ok(checkout, ["cat-file", "-e", f"{head}^{{commit}}"]):
        return (), "Not read: the sync PR's head is not in this checkout."
    try:
        path = records_file(ws.sop_root.absolute(), sync)
    except VimesyncError:
        return (), "Not read: the sync has no name records can have."
    if not path.is_relative_to(checkout):
        return (), "Not read: the records are outside the checkout."
    from vimesync.readers import CommitReader

    reader = CommitReader(checkout, head, checkout)
    try:
        if reader.kind(path) != "file":
            return (), "The sync PR's sync has no records."
        text = reader.read_text(path, max_bytes=MAX_CONFIG_BYTES)
        results = parse_results(text, path.relative_to(checkout).as_posix())
        bound = evidence_head(checkout, head, ws.bookkeeping)
    except VimesyncError:
        return (), "Not read: the sync PR's records could not be read."
    finally:
        reader.close()
    if not results.records:
        return (), "The sync PR's sync has no records."
    stale = Evidence(sync, head, bound, results).not_evidence
    return tuple(StaleRecord(key_of(r)[0], r.name, r.sha) for r in stale), None
