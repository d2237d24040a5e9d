"""walk -> metadata -> policy -> mirrored: what ``vimesync walk`` and ``vimesync report`` both call."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync import git
from vimesync.config import CONFIG_NAME, Config, missing_input
from vimesync.errors import BadInput
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import excerpt
from vimesync.text import plural
from vimesync.upstream import policy as policy_mod
from vimesync.upstream.model import PullRequest, WalkResult
from vimesync.upstream.walk import walk

if TYPE_CHECKING:
    from vimesync.github import PRMeta
    from vimesync.settings import GitHubSettings


# The two parts of a walk, as its progress names them.
WALKING = "walking the upstream range"
SEARCHING = "finding the PRs already downstream"


def parse_range(range_: str | None, config: Config) -> tuple[str | None, str]:
    """``BASE..TIP`` -> (base, tip). Missing parts come from the pin (BASE) and branch (TIP).

    A lone ``TIP`` walks its whole history, root commit included.
    """
    default_tip = config.upstream_branch or "HEAD"
    if range_ is None:
        synced = config.upstream_pin.synced
        if not synced:
            raise _no_synced(config)
        return synced, default_tip
    if "..." in range_:
        raise BadInput(
            f"--range {range_!r}: BASE...TIP (symmetric difference) is not a sync range", hint="use BASE..TIP"
        )
    if ".." not in range_:
        return None, range_
    base, _, tip = range_.partition("..")
    if not base:
        base = config.upstream_pin.synced or ""
        if not base:
            raise _no_synced(
                config, what=f"--range {range_!r} has no BASE and no last-synced upstream commit"
            )
    return base, tip or default_tip


def _no_synced(config: Config, what: str = "no --range given and no last-synced upstream commit") -> BadInput:
    if config.file is not None and config.upstream_pin.file is None:
        return missing_input(config, what, flag="--range BASE..TIP", key="[upstream] pin")
    return missing_input(
        config, what, flag="--range BASE..TIP", key="[upstream] synced", file=config.upstream_pin.file
    )


def _check_synced(upstream: Path, base: str, config: Config) -> None:
    """A ``synced`` the upstream clone does not have: name the pin and suggest the fetch that
    usually fixes it (the pin was bumped past the clone), or the typo."""
    try:
        git.resolve(upstream, base)
    except BadInput:
        pin = config.upstream_pin.file or "the upstream pin"
        raise BadInput(
            f"{pin}: [upstream] synced = {excerpt(base, 44)} is not a commit of the upstream {upstream}",
            hint=f"fetch it (git -C {upstream} fetch origin), or correct the sha in {pin}",
        ) from None


def _tip_rev(repo: Path, tip: str) -> tuple[str, str | None]:
    """(the rev to walk to, its sha when it resolved: the walk need not ask git again)."""
    # A configured branch name may only exist as a remote-tracking branch in a plain clone.
    try:
        return tip, git.resolve(repo, tip)
    except BadInput:
        for alt in (f"origin/{tip}", f"refs/remotes/origin/{tip}"):
            try:
                return alt, git.resolve(repo, alt)
            except BadInput:
                continue
    return tip, None


def _since(repo: Path, base: str) -> str | None:
    from datetime import datetime, timedelta

    if base == git.NULL_SHA:
        return None
    date = _committed(repo, base)
    try:
        # Margin for clock skew between machines that committed upstream and downstream.
        return (datetime.fromisoformat(date) - timedelta(days=2)).isoformat()
    except ValueError:
        return None


_DATES: dict[tuple[str, str], str] = {}
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def _committed(repo: Path, sha: str) -> str:
    """The committer date of ``sha`` (a commit's never changes: the walk of the sync's range and
    the reading of its head ask once)."""
    key = (str(repo), sha)
    if (known := _DATES.get(key)) is not None:
        return known
    date = git.run(repo, ["log", "-1", "--format=%cI", sha]).decode().strip()
    if _FULL_SHA.fullmatch(sha):  # a ref moves
        _DATES[key] = date
    return date


def _unborn(repo: Path) -> bool:
    """A repository whose HEAD names a branch with no commit yet (checked: not a repository is
    the caller's error, as before)."""
    git.git_dir(repo)
    return not git.run_ok(repo, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])


def mirrored_at(
    upstream: Path,
    prs: tuple[PullRequest, ...] | list[PullRequest],
    downstream: Path,
    rev: str,
    *,
    config: Config,
    base: str,
    accept_similar: bool = False,
) -> tuple[PullRequest, ...]:
    """``prs`` marked MIRRORED where the downstream at ``rev`` carries them (the report's head)."""
    if not prs:
        return tuple(prs)
    from vimesync.upstream import mirrored
    from vimesync.upstream.downstreamindex import scan_downstream
    from vimesync.upstream.translate import load_transform

    index = scan_downstream(
        downstream, upstream_repo=config.upstream_repo, since=_since(upstream, base), rev=rev
    )
    return mirrored.mark_mirrored(
        upstream, prs, index, accept_similar=accept_similar, transform=load_transform(config)
    )


@dataclass(frozen=True)
class UpstreamRange:
    """BASE..TIP of a walk: the revs to walk from and to (BASE None: the whole history), whether
    --range named them, whether BASE is the pin's ``synced`` (then checked against the upstream,
    naming the pin), and a note when the tip is not the branch named (its fetched remote)."""

    base: str | None
    tip: str
    explicit: bool
    pinned_base: bool = False
    note: str | None = None


@dataclass(frozen=True)
class WalkSpec:
    """One walk, every location and revision resolved (the workspace's): the upstream and the
    range, the policy file, the downstream to find mirrored PRs in (None: none) and the revision
    there, the PR metadata file, the GitHub settings when labels are fetched (None: not asked)."""

    upstream: Path
    range: UpstreamRange
    policy: Path | None = None
    downstream: Path | None = None
    downstream_rev: str | None = None  # None: the downstream's HEAD
    pr_metadata: Path | None = None
    github: GitHubSettings | None = None
    accept_similar: bool = False


def _no_phase(doing: str) -> AbstractContextManager[object]:
    return nullcontext()


def walk_and_classify(
    spec: WalkSpec,
    config: Config,
    *,
    reader: Reader = WORKTREE,
    phase: Callable[[str], AbstractContextManager[object]] = _no_phase,
) -> WalkResult:
    """Walk the upstream range, enrich PRs with metadata, classify them by policy and mark
    mirrored ones. ``config``: the names, the pin (for messages) and the translations; ``reader``:
    what holds the policy (the working tree, or the head); ``phase(doing)``: a context around
    each of the two parts (the walk, the search downstream when there is one), for progress."""
    upstream, base, tip = spec.upstream, spec.range.base, spec.range.tip
    notes: list[str] = [spec.range.note] if spec.range.note else []
    if base is not None and spec.range.pinned_base:
        _check_synced(upstream, base, config)
    tip_rev, tip_sha = _tip_rev(upstream, tip)
    with phase(WALKING):
        result = walk(upstream, base, tip_rev, tip_sha=tip_sha)
    result = replace(result, upstream=config.upstream_repo or config.upstream_name)
    metas = _metadata(spec, config, result, notes)
    if metas:
        from vimesync.upstream import metadata

        result = metadata.apply_metadata(result, metas)
    pol = policy_mod.load_policy(spec.policy, reader) if spec.policy else policy_mod.EMPTY_POLICY
    if pol.needs_labels and not metas:
        notes.append("the policy has labels rules but no PR metadata was given (--pr-metadata or --github)")
    prs = policy_mod.classify(result.prs, pol)
    downstream = spec.downstream
    if downstream is not None and prs and spec.downstream_rev is None and _unborn(downstream):
        # A downstream just made (`git init`, then `vimesync init`): nothing is mirrored yet.
        notes.append(f"the downstream {downstream} has no commit yet: no PR is mirrored there")
        downstream = None
    if downstream is not None and prs:
        with phase(SEARCHING):
            prs, result = _mark_mirrored(spec, downstream, config, result, prs, notes)
    return replace(result, prs=prs, notes=result.notes + tuple(notes))


def _metadata(spec: WalkSpec, config: Config, result: WalkResult, notes: list[str]) -> dict[int, PRMeta]:
    """Labels and authors: from --pr-metadata, then GitHub (--github); metadata and the GitHub
    client are imported only when used (a plain walk does not pay for compiling them)."""
    metas: dict[int, PRMeta] = {}
    if spec.pr_metadata is not None:
        from vimesync.upstream import metadata

        metas.update(metadata.load_metadata(spec.pr_metadata))
    if spec.github is None or not result.prs:
        return metas
    if not config.upstream_repo:
        raise BadInput(
            f"--github needs the upstream owner/name ({config.provenance()})",
            hint=f"set [upstream] repo in {config.file or CONFIG_NAME} (see docs/config.md)",
        )
    from vimesync.github import fetch_metadata

    wanted = [pr.number for pr in result.prs]
    fetched = fetch_metadata(config.upstream_repo, wanted, spec.github)
    if len(fetched) < len(wanted):
        missing = len(wanted) - len(fetched)
        notes.append(
            f"GitHub has no merged PR #{wanted[0]}"
            if len(wanted) == 1
            else f"GitHub has no merged PR for {missing} of the {len(wanted)} PR numbers"
        )
    metas.update(fetched)
    return metas


def _mark_mirrored(
    spec: WalkSpec,
    downstream: Path,
    config: Config,
    result: WalkResult,
    prs: tuple[PullRequest, ...],
    notes: list[str],
) -> tuple[tuple[PullRequest, ...], WalkResult]:
    """The PRs and direct commits the downstream already carries, marked mirrored."""
    from vimesync.upstream import diffkeys, difflog, downstreamindex, mirrored
    from vimesync.upstream.translate import load_transform

    index = downstreamindex.scan_downstream(
        downstream,
        upstream_repo=config.upstream_repo,
        since=_since(spec.upstream, result.base),
        rev=spec.downstream_rev or "HEAD",
    )
    if index.scanned >= downstreamindex.MAX_DOWNSTREAM:
        notes.append(f"only the newest {index.scanned} downstream commits were searched for mirrored PRs")
    if index.too_big:
        notes.append(
            f"{plural(index.too_big, 'downstream commit')} too large to compare"
            f" (over {difflog.MAX_COMMIT_TEXT >> 20} MiB each or {difflog.MAX_LOG_TEXT >> 20} MiB"
            " in all): only their trailers were read"
        )
    if index.timed_out:
        notes.append(
            f"comparing the downstream history by content ran over {difflog.CONTENT_SECONDS:g} s"
            " (git's own diffing): later commits were matched by their trailers only"
        )
    if index.no_content:
        notes.append(
            f"{plural(index.no_content, 'downstream commit')} change"
            f"{'s' if index.no_content == 1 else ''} too many lines to compare by content"
            f" (over {diffkeys.MAX_LINE_KEYS:,} distinct lines each"
            f" or {downstreamindex.MAX_INDEX_KEYS:,} in all):"
            " only their trailers and patch-ids were used"
        )
    transform = load_transform(config)
    prs = mirrored.mark_mirrored(
        spec.upstream, prs, index, notes=notes, accept_similar=spec.accept_similar, transform=transform
    )
    directs = mirrored.mark_direct_mirrored(result.direct_commits, index)
    return prs, replace(result, direct_commits=directs)
