"""Which sync this is: the upstream commit it starts from and its review-ledger name."""

from __future__ import annotations

from pathlib import Path

from vimesync import git
from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.pins import pinned_at


def upstream_base_of(
    config: Config,
    *,
    upstream: Path,
    tip: str,
    downstream: Path | None = None,
    baseline: str | None = None,
    upstream_base: str | None = None,
) -> str | None:
    """The upstream commit the sync starts from (full sha when it resolves), or None.

    ``upstream_base`` when given, else the upstream pin's ``synced`` as committed at the
    downstream ``baseline`` (stable for the whole sync, even after the pin is bumped), else the
    pin's current ``synced`` unless it already equals the tip.
    """
    tip_sha = git.resolve(upstream, tip)
    base = upstream_base
    if base is None and downstream is not None and baseline is not None:
        base = pinned_at(downstream, baseline, config.upstream_pin.file, "upstream", "synced")
    if base is None and config.upstream_pin.synced:
        base = config.upstream_pin.synced
    if base is None:
        return None
    try:
        base = git.resolve(upstream, base)
    except git.GitError:
        pass
    return None if base == tip_sha else base


def sync_name(
    config: Config,
    *,
    upstream: Path,
    tip: str,
    downstream: Path | None = None,
    baseline: str | None = None,
    upstream_base: str | None = None,
) -> str:
    """The ledger name of this sync: ``<upstream base8>..<tip8>`` (see :func:`upstream_base_of`)."""
    base = upstream_base_of(
        config,
        upstream=upstream,
        tip=tip,
        downstream=downstream,
        baseline=baseline,
        upstream_base=upstream_base,
    )
    return default_sync_name(base, git.resolve(upstream, tip))


def default_sync_name(upstream_base: str | None, upstream_tip: str) -> str:
    """``4c193f1f..8c17b676`` from the upstream range, or the tip alone when the base is unknown."""
    return f"{upstream_base[:8]}..{upstream_tip[:8]}" if upstream_base else upstream_tip[:8]


# The branch a sync branch is made from (SOP: `git switch -c sync/<tip8>` on the local main),
# then the remote's.
_MAIN_BRANCHES = (
    "refs/heads/main",
    "refs/heads/master",
    "refs/remotes/origin/HEAD",
    "refs/remotes/origin/main",
    "refs/remotes/origin/master",
)


def determine_baseline(downstream: Path, head: str) -> tuple[str, str]:
    """The pre-sync commit when ``--baseline`` is not given: where the sync branch left the main
    line (the merge-base of ``head`` and the first of main, master, origin/HEAD, origin/main, ...
    that is not ``head`` itself). Returns (sha, how it was found); BadInput when it cannot tell
    (no such branch, or ``head`` is on it: then every file would count as "changed")."""
    head_sha = git.resolve(downstream, head)
    for ref in _MAIN_BRANCHES:
        out = git.run(
            downstream,
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
            check=False,
        )
        main = out.decode().strip()
        if len(main) != 40:
            continue
        base = git.run(downstream, ["merge-base", head_sha, main], check=False).decode().strip()
        if len(base) == 40 and base != head_sha:
            short = ref.removeprefix("refs/remotes/").removeprefix("refs/heads/")
            return base, f"the merge-base of {head} and {short}"
        break
    raise BadInput(
        f"no --baseline given, and {downstream} has no main branch that {head} left (a sync branch "
        "off main): cannot tell which paths the sync changed",
        hint="pass --baseline REV, the downstream commit before the sync (git merge-base main HEAD)",
    )
