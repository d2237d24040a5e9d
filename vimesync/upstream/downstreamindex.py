"""What the downstream history says about upstream PRs and commits: its trailers (as git parses
them), the patch-ids and the changed lines of its commits, read in ONE streamed ``git log -p``
piped through ONE ``git patch-id --stable`` (vimesync.upstream.mirrored matches PRs to it).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.errors import GitTimeout
from vimesync.upstream.diffkeys import MAX_LINE_KEYS, line_keys, patch_ids
from vimesync.upstream.difflog import BIG_FILES, CONTENT_SECONDS, stream_commits

# Downstream messages are hostile input: linear-time patterns only, PR numbers of at most 9 digits.
UPSTREAM_PR_RE = re.compile(r"^Upstream-PR:\s*(?:([\w.-]+/[\w.-]+))?#(\d{1,9})\s*$", re.M | re.I)
UPSTREAM_COMMIT_RE = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{7,40})\b", re.M | re.I)
CHERRY_RE = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")
_CHERRY_LINE = re.compile(r"[ \t]*\(cherry picked from commit ([0-9a-f]{7,40})\)[ \t]*")
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def cherry_picked(message: str) -> list[str]:
    """The commits ``git cherry-pick -x`` says a message was picked from: its own line in the last
    paragraph, where git writes it (and its trailer parser reads it). Anywhere else the phrase is
    text someone wrote — an upstream title or body a carry copied — and proves nothing."""
    last = _BLANK_LINES.split(message.strip())[-1]
    return [m.group(1) for line in last.split("\n") if (m := _CHERRY_LINE.fullmatch(line))]


MAX_DOWNSTREAM = 20_000  # commits scanned at most, newest first
MAX_INDEX_KEYS = 1_000_000  # in the downstream index (~250 MB)


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
    too_big: int = 0  # commits whose diff was over the bounds: matched by trailers only
    no_content: int = 0  # commits with too many changed lines: matched by trailers and patch-id
    timed_out: bool = False  # git's diffing ran over CONTENT_SECONDS: later commits by trailers only


# The message (indented: patch-id skips it), then a mark and the trailers git itself recognises.
_TRAILERS_MARK = b"\x1fvimesync-trailers"
_LOG_FMT = (
    "--format=commit %H%n%w(0,4,4)%B%n%x1fvimesync-trailers%n"
    "%(trailers:key=Upstream-PR,key=Upstream-Commit,unfold,separator=%x0a)"
)


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


def scan_downstream(
    repo: Path,
    *,
    upstream_repo: str | None = None,
    since: str | None = None,
    max_count: int = MAX_DOWNSTREAM,
    rev: str = "HEAD",
    content_seconds: float = CONTENT_SECONDS,
) -> DownstreamIndex:
    """Read trailers, patch-ids and changed lines of the downstream's recent history at ``rev``
    (``HEAD``; a report passes the pre-sync baseline, so the sync's own commits don't count).

    ``since`` (an ISO date) bounds the scan: commits older than the upstream base cannot carry
    a PR merged after it. Merges are read for trailers only.
    """
    args = [
        *BIG_FILES,
        "log",
        "-p",
        "--no-renames",
        "--diff-merges=off",
        "--no-color",
        _LOG_FMT,
        f"--max-count={max_count}",
    ]
    scan = _Scan(upstream_repo.lower() if upstream_repo else None)
    tip = git.resolve(repo, rev)
    revs, stdin = [tip], None
    if since:
        stdin = _committed_since(repo, tip, since, max_count)
        if not stdin:
            return scan.index(repo, timed_out=False)
        revs = ["--no-walk=unsorted", "--stdin"]
    timed_out = False
    current = None
    try:
        log = git.stream(repo, [*args, *revs], deadline=content_seconds, input=stdin)
        for sha, text, whole in stream_commits(log):
            current = sha
            scan.read(sha, text, whole)
    except GitTimeout:
        # The commit git was diffing may be cut short: its content is not used, and every commit
        # not read yet is read again without diffs, for its trailers.
        timed_out = True
        if current is not None:
            scan.forget_content(current)
        rest = [a for a in args if a not in ("-p", *BIG_FILES)]
        for sha, text, _ in stream_commits(git.stream(repo, [*rest, *revs], input=stdin)):
            if sha not in scan.seen:
                scan.scanned += 1
                scan.read_trailers(sha, text)
    return scan.index(repo, timed_out=timed_out)


def _committed_since(repo: Path, tip: str, since: str, max_count: int) -> bytes:
    """The commits of ``tip``'s history (its newest ``max_count``) committed at or after ``since``,
    one sha per line (for ``--stdin``). Each commit is judged by its own date: git's ``--since``
    stops the walk at the first older commit, so one commit with a skewed or set clock on top
    would hide every carry below it."""
    from datetime import datetime

    try:
        floor = datetime.fromisoformat(since).timestamp()
    except ValueError:
        floor = 0.0
    out = git.run(repo, ["log", "--format=%H %ct", f"--max-count={max_count}", tip])
    keep = []
    for line in out.splitlines():
        sha, _, when = line.partition(b" ")
        if when.isdigit() and int(when) >= floor:
            keep.append(sha)
    return b"".join(sha + b"\n" for sha in keep)


class _Scan:
    """A DownstreamIndex being built from the log, one commit at a time."""

    def __init__(self, want_repo: str | None) -> None:
        self.want_repo = want_repo  # lower-cased; None: an Upstream-PR trailer of any repository
        self.prs: dict[int, str] = {}
        self.commits: dict[str, str] = {}
        self.lines: dict[str, Counter[bytes]] = {}
        self.feed: list[bytes] = []  # the whole commits, as the log had them, for patch-id
        self.seen: set[str] = set()
        self.scanned = self.too_big = self.no_content = 0
        self.budget = MAX_INDEX_KEYS

    def read(self, sha: str, text: bytes, whole: bool) -> None:
        """One commit of the log with its diff (``whole``: within the bounds)."""
        self.scanned += 1
        self.read_trailers(sha, text)
        if not whole:
            self.too_big += 1
            return
        self.feed.append(b"commit " + sha.encode() + text)
        body = text.split(b"\ndiff --git ", 1)
        if len(body) == 2:
            keys = line_keys(b"diff --git " + body[1], min(MAX_LINE_KEYS, self.budget))
            if keys is None:
                self.no_content += 1
                return
            self.lines[sha] = keys
            self.budget -= len(keys)

    def read_trailers(self, sha: str, text: bytes) -> None:
        self.seen.add(sha)
        commits = self.commits
        commits.setdefault(sha, sha)  # shared history: the very same commit
        msg, trailers = message_of(text), trailers_of(text)
        for m in UPSTREAM_PR_RE.finditer(trailers):
            if self.want_repo is None or m.group(1) is None or m.group(1).lower() == self.want_repo:
                self.prs.setdefault(int(m.group(2)), sha)
        for m in UPSTREAM_COMMIT_RE.finditer(trailers):
            commits.setdefault(m.group(1), sha)
        for picked in cherry_picked(msg):
            commits.setdefault(picked, sha)

    def forget_content(self, sha: str) -> None:
        """Drop the diff of ``sha`` when it is the last one read (git may have cut it short)."""
        if self.feed and self.feed[-1].startswith(b"commit " + sha.encode()):
            self.feed.pop()
            self.lines.pop(sha, None)

    def index(self, repo: Path, *, timed_out: bool) -> DownstreamIndex:
        """The index: the patch-ids of the commits read whole, the postings of their lines."""
        pids = patch_ids(repo, b"".join(self.feed))
        self.feed = []
        by_pid: dict[str, str] = {}
        for sha, pid in pids.items():
            by_pid.setdefault(pid, sha)
        postings: dict[bytes, list[str]] = {}
        for sha, keys in self.lines.items():
            for key in keys:
                postings.setdefault(key, []).append(sha)
        short = {k: v for k, v in self.commits.items() if len(k) < 40}
        return DownstreamIndex(
            prs=self.prs,
            commits=self.commits,
            patch_ids=by_pid,
            lines=self.lines,
            postings=postings,
            short_commits=short,
            scanned=self.scanned,
            too_big=self.too_big,
            no_content=self.no_content,
            timed_out=timed_out,
        )


def lookup_commit(index: DownstreamIndex, sha: str) -> str | None:
    """The downstream commit that is ``sha`` or names it in a trailer (or cherry-pick line),
    abbreviated or not; None when none does."""
    if sha in index.commits:
        return index.commits[sha]
    # Abbreviated shas in trailers: look up each prefix of ``sha`` (the longest, most specific,
    # wins) rather than scanning every trailer for every upstream commit.
    for n in range(len(sha) - 1, 6, -1):
        if (down := index.short_commits.get(sha[:n])) is not None:
            return down
    return None
