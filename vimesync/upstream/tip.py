"""Which commit is the upstream tip when the config's ``branch`` (or the clone's HEAD) names it.

A maintainer's upstream is usually a clone updated with ``git fetch origin`` (SOP step 0): that
moves ``origin/main``, not the local ``main``. Walking the stale local branch would silently
miss every fetched commit, so a local branch whose remote-tracking counterpart is ahead of it
yields the remote one (said in a note), and two that have diverged are refused with both shas.
"""

from __future__ import annotations

from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput
from vimesync.text import plural


def _sha(repo: Path, ref: str) -> str | None:
    out = git.run(
        repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], check=False
    )
    sha = out.decode().strip()
    return sha if len(sha) == 40 else None


def _local_branch(repo: Path, branch: str) -> tuple[str, str | None] | None:
    """The local branch ``branch`` names (``HEAD`` -> the checked-out one) and its commit when
    it was read on the way, or None."""
    if branch == "HEAD":
        name = git.run(repo, ["symbolic-ref", "-q", "--short", "HEAD"], check=False).decode().strip()
        return (name, None) if name else None
    if branch.startswith("refs/heads/"):
        branch = branch.removeprefix("refs/heads/")
    sha = _sha(repo, f"refs/heads/{branch}")
    return (branch, sha) if sha else None


def configured_tip(repo: Path, branch: str) -> tuple[str, str | None]:
    """The rev to use for ``branch`` in the upstream clone ``repo``, and a note when it is not
    ``branch`` itself. BadInput when the local branch and its remote-tracking one have diverged."""
    found = _local_branch(repo, branch)
    if found is None:
        if _sha(repo, branch) is None and _sha(repo, f"refs/remotes/origin/{branch}"):
            return f"origin/{branch}", None  # only a remote-tracking branch by that name
        return branch, None
    local, local_sha = found
    remote = f"origin/{local}"
    local_sha = local_sha or _sha(repo, f"refs/heads/{local}")
    remote_sha = _sha(repo, f"refs/remotes/{remote}")
    if local_sha is None or remote_sha is None or local_sha == remote_sha:
        return branch, None
    if git.is_ancestor(repo, local_sha, remote_sha):
        ahead = int(git.run(repo, ["rev-list", "--count", f"{local_sha}..{remote_sha}"]).decode())
        return remote, (
            f"upstream tip: {remote} ({remote_sha[:8]}), {plural(ahead, 'commit')} ahead of the local"
            f" {local} "
            f'({local_sha[:8]}) in {repo}; set [upstream] branch = "{remote}" to say so'
        )
    if git.is_ancestor(repo, remote_sha, local_sha):
        return branch, None  # local work on top of the fetched tip: the local branch is the tip
    raise BadInput(
        f"upstream branch {local!r} in {repo} has diverged from {remote}: "
        f"{local} is {local_sha}, {remote} is {remote_sha}",
        hint=f'set [upstream] branch = "{remote}" (the fetched tip) in the config, or name the tip '
        "with --range BASE..TIP (walk, report) or --upstream-tip (audit)",
    )
