"""What a patch says about the tree it was made against, checked against the tree it meets.

- **Index drift**: a git diff's ``index <old>..<new>`` line names the blob the patch was made
  from. Before a patch is applied, each file it modifies is hashed as git would hash it (git's
  blob id works for any file, whatever the source: directory, archive or repository) and compared,
  so a failure can say *why*: "made against 1a2b3c4, the pin has 5d6e7f8" — or, across the stack,
  "…, after 0002-foo.patch it is 5d6e7f8".
- **Upstreamed**: a DEP-3 ``Applied-Upstream:`` naming a commit that the git pin contains.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from vimesync import git
from vimesync.errors import GitError
from vimesync.git import blob_oid
from vimesync.patches.model import Dep3, IndexDrift, PatchFile
from vimesync.patches.tree import MODE_DIR, ScratchTree
from vimesync.sources.model import Entry

_NULL_OID = re.compile(r"0+")
_MIN_ABBREV = 7


def index_drift(tree: ScratchTree, patch: PatchFile, pinned: Mapping[str, Entry]) -> tuple[IndexDrift, ...]:
    """The files of ``patch`` whose ``index`` line names other content than ``tree`` holds now.

    ``pinned`` is the source's listing: a git source's blob ids spare reading files no earlier
    patch wrote. A file that is missing (or out of reach) is left to the applier to report.
    """
    found: list[IndexDrift] = []
    seen: set[str] = set()
    for fp in patch.files:
        path, want = fp.old_path, (fp.old_oid or "").lower()
        if path is None or not want or _NULL_OID.fullmatch(want) or path in seen:
            continue
        seen.add(path)  # a second section for the same path patches the first one's result
        writer = tree.writers.get(path)
        entry = pinned.get(path) if writer is None else None
        oid = entry.oid if entry is not None else None
        if oid is None:
            current = tree.current(path)
            if current is None or current[1] == MODE_DIR:
                continue
            oid = blob_oid(current[0])
        if not oid.startswith(want):
            shown = max(len(want), _MIN_ABBREV)
            result = (fp.new_oid or "").lower()
            is_result = bool(result) and not _NULL_OID.fullmatch(result) and oid.startswith(result)
            found.append(IndexDrift(fp.path, want, oid[:shown], by=writer, is_result=is_result))
    return tuple(found)


# DEP-3: "Applied-Upstream: <version>, <url>, commit:<commit id>"; we take commit ids only.
_COMMIT = re.compile(r"(?:commit[:/ ]|/commits?/)([0-9a-fA-F]{7,40})\b|^([0-9a-fA-F]{7,40})$")
_MAX_FIELD = 1024


def applied_upstream_commit(dep3: Dep3 | None) -> str | None:
    """The commit id an ``Applied-Upstream:`` field names, if it names one."""
    if dep3 is None:
        return None
    for value in dep3.get_all("applied-upstream"):
        for part in value[:_MAX_FIELD].replace(",", " ").split():
            m = _COMMIT.search(part) or _COMMIT.search(part.rstrip("/"))
            if m:
                return (m.group(1) or m.group(2)).lower()
    return None


def upstreamed_in(repo: Path, pin: str, commit: str) -> bool:
    """Does the git pin ``pin`` contain ``commit``? (False when the repository does not know it.)"""
    try:
        sha = git.resolve(repo, commit)
    except GitError:
        return False
    return git.is_ancestor(repo, sha, pin)
