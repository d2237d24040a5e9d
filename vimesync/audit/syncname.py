"""Which sync this is: its review-ledger name, and the pre-sync commit a sync branch left main at."""

from __future__ import annotations

from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput


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
