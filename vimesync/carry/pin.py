"""The last commit of a carry: ``synced = "<TIP>"`` in the upstream pin, comments and layout kept
(``vimesync.tomledit``: checked like every TOML input, then edited in place by tomlkit)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import tomlkit

from vimesync import git, tomledit
from vimesync.carry import gitops
from vimesync.carry.model import EMPTY, EMPTY_RESOLVED, SKIPPED
from vimesync.errors import ConfigError
from vimesync.safefs import MAX_CONFIG_BYTES, scratch_dir

if TYPE_CHECKING:
    from vimesync.carry.state import State


def set_synced(text: str, tip: str, *, where: str) -> str:
    """``text`` (a pin file) with ``[upstream] synced`` set to ``tip``; ConfigError naming the
    file when it is not TOML."""
    doc = tomledit.loads(text, where=where)  # checked like every TOML input before tomlkit parses it
    table = doc.get("upstream")
    if table is None:
        table = tomlkit.table()
        doc["upstream"] = table
    if not isinstance(table, dict):
        raise ConfigError(where, "[upstream] is not a table")
    table["synced"] = tip
    return tomledit.dumps(doc)


def bump_synced(downstream: Path, state: State, ref: str, who: dict[str, str]) -> str | None:
    """Commit the pin bump on the sync branch; None when the pin already says TIP."""
    assert state.pin is not None
    entries = git.ls_tree(downstream, state.last, [state.pin])
    text = ""
    if entries:
        if entries[0].kind != "blob" or entries[0].mode not in (0o100644, 0o100755):
            raise ConfigError(state.pin, "the upstream pin is not a regular file on the sync branch")
        if entries[0].size > MAX_CONFIG_BYTES:
            raise ConfigError(state.pin, "the upstream pin is too large")
        with git.CatFile(downstream) as cat:
            try:
                text = cat.read(entries[0].oid).decode("utf-8")
            except UnicodeDecodeError:
                raise ConfigError(state.pin, "the upstream pin is not UTF-8") from None
    new = set_synced(text, state.synced or state.tip, where=state.pin)
    if new == text:
        return None
    oid = (
        git.run(downstream, ["hash-object", "-w", "--no-filters", "--stdin"], input=new.encode())
        .decode()
        .strip()
    )
    mode = entries[0].mode if entries else 0o100644
    with scratch_dir("vimesync-pin-") as tmp:
        index = gitops.Index(downstream, Path(tmp), state.last)
        from vimesync.carry.memtree import Leaf

        index.update({state.pin: Leaf(mode, oid)})
        tree = index.write_tree()
    message = _message(state)
    commit = gitops.commit_tree(downstream, tree, [state.last], message, who)
    gitops.move_branch(downstream, ref, commit, state.last)
    state.last = commit
    return commit


EMPTY_REASONS = (EMPTY, EMPTY_RESOLVED)


def _message(state: State) -> str:
    """The pin bump's message. Its trailers record the PRs that made no commit: ``Upstream-PR``
    for those already in the downstream (so the next walk sees them mirrored, like the carried
    ones), ``Carry-Skipped`` for those skipped at a conflict (the report lists them as not carried)."""
    repo = state.upstream_repo or ""
    empty = [s for s in state.skipped if s.pr is not None and s.reason in EMPTY_REASONS]
    skipped = [s for s in state.skipped if s.pr is not None and s.reason == SKIPPED]
    resolved = sum(1 for s in empty if s.reason == EMPTY_RESOLVED)
    # a conflict resolved to nothing is not "already in the downstream": its change was dropped
    emptied = f", {resolved} empty after the conflict was resolved" if resolved else ""
    lines = [
        f"Sync upstream through {(state.synced or state.tip)[:12]}",
        "",
        f"vimesync carry {state.base[:12]}..{state.tip[:12]}: {len(state.carried)} carried,"
        f" {len(empty) - resolved} already in the downstream{emptied}, {len(skipped)} skipped at a conflict.",
    ]
    trailers = [f"Upstream-PR: {repo}#{s.pr}" for s in empty]
    trailers += [f"Carry-Skipped: {repo}#{s.pr}" for s in skipped]
    if trailers:
        lines += ["", *trailers]
    return "\n".join(lines) + "\n"
