"""What two diffs are compared by: their paths mapped to downstream names, their changed lines
as keys (per file, whitespace-insensitive), their stable patch-ids (``git patch-id --stable``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from vimesync import git
from vimesync.pathmap import PathMap

# Distinct changed lines compared by content (the largest commit of THUDM/slime has 8k, its whole
# history 264k): past them a commit is matched by trailers and patch-id only.
MAX_LINE_KEYS = 50_000  # per commit


def map_paths(diff: bytes, path_map: PathMap) -> bytes:
    """Rewrite upstream paths in diff headers to their downstream names."""
    if not path_map.pairs:
        return diff
    fix = path_map.forward
    out = []
    for line in diff.split(b"\n"):
        if line.startswith(b"diff --git a/") and b" b/" in line:
            a, _, b = line[len(b"diff --git a/") :].partition(b" b/")
            line = b"diff --git a/" + fix(a) + b" b/" + fix(b)
        elif line.startswith((b"--- a/", b"+++ b/")):
            line = line[:6] + fix(line[6:])
        out.append(line)
    return b"\n".join(out)


def changed_lines(diff: bytes) -> Counter[bytes]:
    """Changed lines keyed by file, whitespace-insensitive, trivial lines dropped."""
    keys = line_keys(diff, None)
    assert keys is not None
    return keys


def line_keys(diff: bytes, limit: int | None = MAX_LINE_KEYS) -> Counter[bytes] | None:
    """``changed_lines``, or None as soon as there are more than ``limit`` distinct keys."""
    keys: Counter[bytes] = Counter()
    path = b""
    for raw in diff.split(b"\n"):
        head = raw[:1]
        if head == b"+" or head == b"-":
            if raw.startswith((b"+++ b/", b"--- a/", b"+++ /dev/null", b"--- /dev/null")):
                continue  # file headers, not changed lines
            text = b"".join(raw[1:].split())
            if len(text) >= 3:  # skip "}", ")", blank lines: they match anything
                keys[path + head + text] += 1
                if limit is not None and len(keys) > limit:
                    return None
        elif raw.startswith(b"diff --git "):
            path = raw.rsplit(b" b/", 1)[-1] + b"\0"
    return keys


def patch_ids(repo: Path, log: bytes) -> dict[str, str]:
    """sha -> stable patch-id for each commit in ``log`` (one ``git patch-id`` process)."""
    if not log.strip():
        return {}
    out = git.run(repo, ["patch-id", "--stable"], input=log).decode().splitlines()
    return {commit: pid for pid, commit in (line.split() for line in out if line.strip())}
