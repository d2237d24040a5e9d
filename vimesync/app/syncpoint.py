"""Where a sync is when the flags do not say: its head and baseline found from git, or the sync
branch the repository records (a ``vimesync sync`` or ``carry`` state) when the command runs on
the main line; never the pre-sync tree taken for a sync."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.errors import BadInput

# How the baseline is found when --baseline is not given:
# "none": it is not looked for (walk, carry, the patch stack);
# "optional": the sync branch's fork point when there is one (records, promote);
# "required": it must exist (audit review: without it every file would count as changed);
# "sync": the head must be a sync — else the sync branch the repository records, else refused
# (audit, report, sop status: they describe a sync).
BaselineRule = Literal["none", "optional", "required", "sync"]


def head_or_none(downstream: Path) -> str | None:
    out = git.run(downstream, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
    sha = out.decode().strip()
    return sha or None


@dataclass(frozen=True)
class SyncPoint:
    """Where the sync is: its head, its baseline (None: unknown), how the baseline was found, and
    the work tree to name its files under (the sync branch's own, when the command ran elsewhere)."""

    head: str
    baseline: str | None
    how: str | None
    root: Path


def find_baseline(
    downstream: Path,
    head: str,
    head_rev: str,
    rule: BaselineRule,
    *,
    explicit_head: str | None,
    notes: list[str],
) -> SyncPoint:
    """The head and baseline when --baseline is not given (see :data:`BaselineRule`)."""
    from vimesync.audit.syncname import determine_baseline

    try:
        base, how = determine_baseline(downstream, head_rev)
    except BadInput as exc:
        if rule == "optional":
            return SyncPoint(head, None, None, downstream)
        if rule == "required" or explicit_head is not None:
            raise
        found = recorded_sync(downstream)
        if found is None:
            raise _not_a_sync(downstream, head, exc) from None
        branch, branch_head, base, worktree = found
        notes.append(
            f"HEAD ({head[:12]}) is not a sync: describing the sync branch {branch} at {branch_head[:12]}"
            f" (its baseline {base[:12]}); pass --head and --baseline to describe another"
        )
        how = f"the baseline the sync branch {branch} records"
        return SyncPoint(branch_head, base, how, worktree or downstream)
    return SyncPoint(head, base, how, downstream)


def _not_a_sync(downstream: Path, head: str, why: BadInput) -> BadInput:
    """The head is no sync and the repository records none: never describe the pre-sync tree as
    a sync. Names the sync branches there are (``sync/*``), where carry makes them."""
    from vimesync.carry import gitops

    out = git.run(downstream, ["for-each-ref", "--format=%(refname)", "refs/heads/sync/"], check=False)
    refs = [r for r in out.decode("utf-8", "replace").split() if r][:3]
    where = gitops.worktrees(downstream) if refs else {}
    named = [
        f"{ref.removeprefix('refs/heads/')}"
        + "".join(f" (checked out in {wt})" for wt, at in where.items() if at == ref)
        for ref in refs
    ]
    there = f"; sync branches here: {', '.join(named)}" if named else ""
    return BadInput(
        f"HEAD ({head[:12]}) is not a sync: {why.message}, and this repository records no sync"
        f" in progress (vimesync sync or carry){there}",
        hint="run it in the sync branch's worktree, or pass --head REV (the sync's head) and"
        " --baseline REV (the downstream commit before the sync)",
    )


def recorded_sync(repo: Path) -> tuple[str, str, str, Path | None] | None:
    """The sync branch this repository records (a ``vimesync sync`` in progress or finished, else
    a carry in progress): (its name, its head, its baseline, the worktree it is checked out in),
    when the branch still exists."""
    from vimesync.app import syncstate
    from vimesync.carry import gitops
    from vimesync.carry import state as carry_state

    candidates: list[tuple[str, str]] = []
    if syncstate.exists(repo):
        s = syncstate.load(repo)
        if s.branch:
            candidates.append((s.branch, s.baseline))
    if carry_state.exists(repo):
        c = carry_state.load(repo)
        candidates.append((c.branch, c.onto))
    for branch, base in candidates:
        ref = f"refs/heads/{branch}"
        tip = gitops.branch_at(repo, ref)
        if tip is not None and tip != base:
            worktree = next((wt for wt, at in gitops.worktrees(repo).items() if at == ref), None)
            return branch, tip, base, worktree
    return None
