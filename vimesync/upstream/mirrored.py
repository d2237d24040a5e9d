"""Which upstream PRs the downstream already carries.

Evidence, strongest first:

1. trailers in downstream messages (as git parses them: the message's last paragraph):
   ``Upstream-PR: owner/repo#N``, ``Upstream-Commit: <sha>``,
   ``(cherry picked from commit <sha>)``, or the very same commit in downstream history;
2. ``git patch-id --stable`` equality of the PR's whole diff, or of every one of its commits,
   with downstream commits (survives reworded messages and moved line numbers);
3. similar content: most of the PR's changed lines (per file) appear in one downstream commit
   (survives small conflict edits, which change a patch-id).

Upstream paths are rewritten through the path map (``slime/`` -> ``vime/``) before comparing.
Downstream is read with ONE ``git log -p`` piped through ONE ``git patch-id --stable``;
upstream diffs likewise with one ``git log --no-walk --stdin`` and one patch-id.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from vimesync import git
from vimesync.errors import GitError
from vimesync.upstream.model import MIRRORED, Decision, PullRequest

# Downstream messages are hostile input: linear-time patterns only, PR numbers of at most 9 digits.
UPSTREAM_PR_RE = re.compile(r"^Upstream-PR:\s*(?:([\w.-]+/[\w.-]+))?#(\d{1,9})\s*$", re.M | re.I)
UPSTREAM_COMMIT_RE = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.M | re.I)
CHERRY_RE = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_COMMIT_LINE = re.compile(rb"^commit ([0-9a-f]{40})$", re.M)

SIMILARITY = 0.75  # share of changed lines that must agree for "similar content"
MIN_LINES = 3  # below this, similarity proves nothing (a one-line bump matches any other)
MAX_DOWNSTREAM = 20_000  # commits scanned at most, newest first


@dataclass(frozen=True)
class DownstreamIndex:
    """What the downstream history says about upstream PRs and commits."""

    prs: dict[int, str] = field(default_factory=dict)  # upstream PR -> downstream sha (trailer)
    commits: dict[str, str] = field(default_factory=dict)  # upstream sha (maybe short) -> downstream sha
    patch_ids: dict[str, str] = field(default_factory=dict)  # patch-id -> downstream sha
    lines: dict[str, Counter[bytes]] = field(default_factory=dict)  # downstream sha -> changed-line keys
    postings: dict[bytes, list[str]] = field(default_factory=dict)  # changed-line key -> downstream shas
    short_commits: dict[str, str] = field(default_factory=dict)  # abbreviated upstream sha -> downstream sha
    scanned: int = 0


# ---------------------------------------------------------------------------------------------
# Diff helpers (pure)


def split_commits(log: bytes) -> list[tuple[str, bytes]]:
    """Split ``git log -p --format='commit %H%n%w(0,4,4)%B'`` output into (sha, text) pairs."""
    marks = list(_COMMIT_LINE.finditer(log))
    return [
        (m.group(1).decode(), log[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(log)])
        for i, m in enumerate(marks)
    ]


def message_of(text: bytes) -> str:
    """The (de-indented) message part of one commit's text."""
    head = text.split(b"\ndiff --git ", 1)[0]
    head = head.rpartition(_TRAILERS_MARK)[0] if _TRAILERS_MARK in head else head
    return "\n".join(line[4:] for line in head.decode("utf-8", "replace").splitlines())


def trailers_of(text: bytes) -> str:
    """The ``Upstream-PR``/``Upstream-Commit`` trailers git found in one commit's text (by git's
    own trailer rules: the last paragraph, so such a line in the middle of a message is no trailer)."""
    head = text.split(b"\ndiff --git ", 1)[0]
    _, mark, tail = head.rpartition(_TRAILERS_MARK)
    return "\n".join(line.strip() for line in tail.decode("utf-8", "replace").splitlines()) if mark else ""


def map_paths(diff: bytes, path_map: Sequence[tuple[str, str]]) -> bytes:
    """Rewrite upstream path prefixes in diff headers to their downstream names."""
    if not path_map:
        return diff
    pairs = [(s.encode(), d.encode()) for s, d in path_map]

    def fix(path: bytes) -> bytes:
        for src, dst in pairs:
            if path.startswith(src):
                return dst + path[len(src) :]
        return path

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
        elif raw.startswith(b"diff --git "):
            path = raw.rsplit(b" b/", 1)[-1] + b"\0"
    return keys


def patch_ids(repo: Path, log: bytes) -> dict[str, str]:
    """sha -> stable patch-id for each commit in ``log`` (one ``git patch-id`` process)."""
    if not log.strip():
        return {}
    out = git.run(repo, ["patch-id", "--stable"], input=log).decode().splitlines()
    return {commit: pid for pid, commit in (line.split() for line in out if line.strip())}


# ---------------------------------------------------------------------------------------------
# Reading both sides

# The message (indented: patch-id skips it), then a mark and the trailers git itself recognises.
_TRAILERS_MARK = b"\x1fvimesync-trailers"
_LOG_FMT = (
    "--format=commit %H%n%w(0,4,4)%B%n%x1fvimesync-trailers%n"
    "%(trailers:key=Upstream-PR,key=Upstream-Commit,unfold,separator=%x0a)"
)


def scan_downstream(
    repo: Path,
    *,
    upstream_repo: str | None = None,
    since: str | None = None,
    max_count: int = MAX_DOWNSTREAM,
    rev: str = "HEAD",
) -> DownstreamIndex:
    """Read trailers, patch-ids and changed lines of the downstream's recent history at ``rev``
    (``HEAD``; a report passes the pre-sync baseline, so the sync's own commits don't count).

    ``since`` (an ISO date) bounds the scan: commits older than the upstream base cannot carry
    a PR merged after it. Merges are read for trailers only.
    """
    args = [
        "log",
        "-p",
        "--no-renames",
        "--diff-merges=off",
        "--no-color",
        _LOG_FMT,
        f"--max-count={max_count}",
    ]
    if since:
        args.append(f"--since={since}")
    log = git.run(repo, [*args, git.resolve(repo, rev)])
    prs: dict[int, str] = {}
    commits: dict[str, str] = {}
    lines: dict[str, Counter[bytes]] = {}
    parts = split_commits(log)
    want_repo = upstream_repo.lower() if upstream_repo else None
    for sha, text in parts:
        commits.setdefault(sha, sha)  # shared history: the very same commit
        msg, trailers = message_of(text), trailers_of(text)
        for m in UPSTREAM_PR_RE.finditer(trailers):
            if want_repo is None or m.group(1) is None or m.group(1).lower() == want_repo:
                prs.setdefault(int(m.group(2)), sha)
        for m in (*UPSTREAM_COMMIT_RE.finditer(trailers), *CHERRY_RE.finditer(msg)):
            commits.setdefault(m.group(1), sha)
        body = text.split(b"\ndiff --git ", 1)
        if len(body) == 2:
            lines[sha] = changed_lines(b"diff --git " + body[1])
    pids = patch_ids(repo, log)
    by_pid: dict[str, str] = {}
    for sha, pid in pids.items():
        by_pid.setdefault(pid, sha)
    postings: dict[bytes, list[str]] = {}
    for sha, keys in lines.items():
        for key in keys:
            postings.setdefault(key, []).append(sha)
    short = {k: v for k, v in commits.items() if len(k) < 40}
    return DownstreamIndex(
        prs=prs,
        commits=commits,
        patch_ids=by_pid,
        lines=lines,
        postings=postings,
        short_commits=short,
        scanned=len(parts),
    )


@dataclass(frozen=True)
class UpstreamDiff:
    sha: str
    is_merge: bool
    diff: bytes  # path-mapped; a merge's is against its first parent


def upstream_diffs(
    repo: Path, shas: Iterable[str], path_map: Sequence[tuple[str, str]]
) -> dict[str, UpstreamDiff]:
    """sha -> path-mapped diff of each commit, in one ``git log --no-walk --stdin``."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    args = ["log", "--no-walk=unsorted", "--stdin", "-p", "--no-renames", "--diff-merges=first-parent"]
    # Parents go in the indented message area, which patch-id skips.
    fmt = "--format=commit %H%n    %P"
    log = git.run(repo, [*args, "--no-color", fmt], input="\n".join(wanted).encode() + b"\n")
    out = {}
    for sha, text in split_commits(log):
        parents = text.split(b"\n", 2)[1].split() if text.count(b"\n") >= 2 else []
        out[sha] = UpstreamDiff(sha=sha, is_merge=len(parents) > 1, diff=map_paths(text, path_map))
    return out


# ---------------------------------------------------------------------------------------------
# Matching


def _lookup_commit(index: DownstreamIndex, sha: str) -> str | None:
    if sha in index.commits:
        return index.commits[sha]
    # Abbreviated shas in trailers: look up each prefix of ``sha`` (the longest, most specific,
    # wins) rather than scanning every trailer for every upstream commit.
    for n in range(len(sha) - 1, 6, -1):
        if (down := index.short_commits.get(sha[:n])) is not None:
            return down
    return None


def _similar(index: DownstreamIndex, want: Counter[bytes]) -> tuple[str, float] | None:
    total = sum(want.values())
    if total < MIN_LINES:
        return None
    candidates: Counter[str] = Counter()
    for key, n in want.items():
        for sha in index.postings.get(key, ()):
            candidates[sha] += min(n, index.lines[sha][key])
    best: tuple[str, float] | None = None
    for sha, common in candidates.items():
        have = index.lines[sha]
        score = common / max(total, sum(have.values()))
        if score >= SIMILARITY and (best is None or score > best[1]):
            best = (sha, score)
    return best


def find_mirror(
    pr: PullRequest, index: DownstreamIndex, diffs: dict[str, UpstreamDiff], ids: dict[str, str], whole: bytes
) -> tuple[str, str] | None:
    """(how, downstream sha) when ``pr`` is carried downstream, else None.

    ``diffs``/``ids`` hold mapped diffs and patch-ids of upstream commits; ``whole`` is the PR's
    whole mapped diff, whose patch-id is ``ids["whole:" + merge_commit]``.
    """
    if pr.number in index.prs:
        return "trailer Upstream-PR", index.prs[pr.number]
    for sha in reversed(pr.commits):
        down = _lookup_commit(index, sha)
        if down is not None:
            return ("same commit" if down == sha else "trailer Upstream-Commit/cherry-picked"), down
    pid = ids.get("whole:" + pr.merge_commit)
    if pid and pid in index.patch_ids:
        return "patch-id of the PR", index.patch_ids[pid]
    # Picked one by one: every non-merge commit with a diff has a downstream twin.
    own = [ids[s] for s in pr.commits if s in ids and s in diffs and not diffs[s].is_merge]
    if own and all(p in index.patch_ids for p in own):
        return "patch-id of each commit", index.patch_ids[own[-1]]
    hit = _similar(index, changed_lines(whole)) if whole else None
    if hit:
        return f"similar content ({hit[1]:.0%} of changed lines)", hit[0]
    return None


def _feed(items: Iterable[tuple[str, bytes]]) -> bytes:
    return b"".join(b"commit " + key.encode() + b"\n" + text + b"\n" for key, text in items)


def mark_mirrored(
    upstream: Path,
    prs: Sequence[PullRequest],
    index: DownstreamIndex,
    path_map: Sequence[tuple[str, str]] = (),
) -> tuple[PullRequest, ...]:
    """``prs`` with a MIRRORED decision for those the downstream carries (others unchanged)."""
    todo = [
        pr
        for pr in prs
        if pr.number not in index.prs and not any(_lookup_commit(index, s) for s in pr.commits)
    ]
    diffs = upstream_diffs(upstream, (s for pr in todo for s in pr.commits), path_map)
    wholes: dict[str, bytes] = {}
    for pr in todo:
        singles = [s for s in pr.commits if s in diffs and not diffs[s].is_merge]
        if pr.kind == "rebase" and len(singles) > 1:
            # One diff over the whole rebase-merged series, for a downstream that squashed it.
            args = ["diff", "--no-renames", "--no-color", f"{pr.commits[0]}^", pr.merge_commit]
            try:
                wholes[pr.merge_commit] = map_paths(git.run(upstream, args), path_map)
            except GitError:  # the series starts at the root commit: its per-commit ids still count
                pass
        elif pr.merge_commit in diffs:
            wholes[pr.merge_commit] = diffs[pr.merge_commit].diff
    ids = patch_ids(upstream, _feed((sha, d.diff) for sha, d in diffs.items()))
    # Whole diffs under their own keys: the fake "commit" ids are only labels for patch-id.
    labels = {f"{i:040x}": m for i, m in enumerate(wholes, start=1)}
    for label, pid in patch_ids(upstream, _feed((lb, wholes[m]) for lb, m in labels.items())).items():
        ids["whole:" + labels[label]] = pid
    out = []
    for pr in prs:
        found = find_mirror(pr, index, diffs, ids, wholes.get(pr.merge_commit, b""))
        if found is None:
            out.append(pr)
            continue
        how, down = found
        decision = Decision(
            status=MIRRORED, reason=f"already downstream: {how} in {down[:12]}", mirrored_by=how
        )
        out.append(replace(pr, decision=decision))
    return tuple(out)
