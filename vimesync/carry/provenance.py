"""Where the lines of a conflict come from, when the carry left that upstream change out.

A conflict often means the downstream lacks an earlier upstream change to the same lines: a PR
the policy excluded, or one skipped at a conflict. ``git blame --first-parent`` of the upstream
base names the first-parent commit that wrote the conflicting lines; when the carry left that
commit's PR out, the conflict says so (``the conflicting lines come from #12, excluded by the
policy: docs (rule 2)``), as sqren/backport does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vimesync import git
from vimesync.carry.merge import MergeConflict
from vimesync.carry.model import SkippedItem
from vimesync.errors import GitError, GitTimeout

BLAME_SECONDS = 10.0  # per file: git's blame of a hostile history is cut short
MAX_FILES = 20  # conflicting files looked into
MAX_BLAME = 1 << 20  # bytes of blame output read per file
_LINE = re.compile(rb"^([0-9a-f]{40,64}) \d+ \d+", re.M)


def left_out(skipped: Sequence[SkippedItem]) -> dict[str, str]:
    """first-parent upstream commit -> "#N, <why it was not carried>", from a carry's skipped
    entries (excluded by the policy, skipped at a conflict)."""
    return {
        s.upstream_commit: f"#{s.pr}, {s.reason}" for s in skipped if s.pr is not None and s.upstream_commit
    }


def blamed(upstream: Path, parent: str, path: str, ranges: Sequence[tuple[int, int]]) -> list[str]:
    """The first-parent commits that wrote lines ``ranges`` of ``path`` at ``parent``, in order
    (empty when git cannot tell in time)."""
    args = ["blame", "--first-parent", "--porcelain", *(f"-L{a},{b}" for a, b in ranges), parent, "--", path]
    out = bytearray()
    try:
        for chunk in git.stream(upstream, args, deadline=BLAME_SECONDS):
            out += chunk
            if len(out) > MAX_BLAME:
                break
    except (GitError, GitTimeout):
        return []
    return list(dict.fromkeys(m.group(1).decode() for m in _LINE.finditer(out)))


def with_hints(
    upstream: Path, parent: str | None, conflicts: Sequence[MergeConflict], left: Mapping[str, str]
) -> list[MergeConflict]:
    """``conflicts``, each content conflict whose lines a left-out PR wrote naming that PR."""
    out = []
    for i, c in enumerate(conflicts):
        if parent and left and i < MAX_FILES and c.upstream_path and c.base_lines:
            named = [
                left[sha] for sha in blamed(upstream, parent, c.upstream_path, c.base_lines) if sha in left
            ]
            if named:
                c = replace(c, hint="the conflicting lines come from " + "; ".join(named))
        out.append(c)
    return out
