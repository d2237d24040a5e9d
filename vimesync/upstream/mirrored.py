"""Which upstream PRs the downstream already carries.

Evidence, strongest first:

1. trailers in downstream messages (as git parses them: the message's last paragraph):
   ``Upstream-PR: owner/repo#N``, ``Upstream-Commit: <sha>``,
   ``(cherry picked from commit <sha>)``, or the very same commit in downstream history;
2. ``git patch-id --stable`` equality of the PR's whole diff, or of every one of its commits,
   with downstream commits (survives reworded messages and moved line numbers);
3. similar content: most of the PR's changed lines (per file) appear in one downstream commit
   (survives small conflict edits, which change a patch-id).

Upstream paths are rewritten through the path map (``slime/`` -> ``vime/``) and the lines of
their hunks through the ``[[upstream.translate]]`` rules before comparing, as the carry would
write them: a port made by hand (translated) has the patch-id of the translated upstream diff.
Downstream is read with ONE streamed ``git log -p`` piped through ONE ``git patch-id --stable``;
upstream diffs likewise with one ``git log --no-walk --stdin`` and one patch-id.

Both histories are hostile input (a PR commit can add a 98 MB file that compresses to 100 KB):
the log is read as a stream and split as it comes, each commit's text is held up to
MAX_COMMIT_TEXT and all of them up to MAX_LOG_TEXT. A commit over either bound is still indexed
by its message and trailers, but its diff takes no part in patch-id or content matching.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync import git
from vimesync.errors import GitError, GitTimeout
from vimesync.pathmap import PathMap
from vimesync.upstream.model import APPLICABLE, MIRRORED, Decision, DirectCommit, PrKind, PullRequest

if TYPE_CHECKING:
    from vimesync.upstream.translate import Transform

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


_COMMIT_LINE = re.compile(rb"^commit ([0-9a-f]{40})$", re.M)
_COMMIT_MARK = re.compile(rb"^commit ([0-9a-f]{40})(?=\n)", re.M)  # complete lines only (streaming)

SIMILARITY = 0.75  # share of changed lines that must agree for "similar content"
MIN_LINES = 3  # below this, similarity proves nothing (a one-line bump matches any other)
MAX_DOWNSTREAM = 20_000  # commits scanned at most, newest first
MAX_COMMIT_TEXT = 8 * 1024 * 1024  # one commit's message and diff held at most (a large commit: ~1 MB)
MAX_LOG_TEXT = 64 * 1024 * 1024  # all commits' diffs held at most, per side
# Distinct changed lines compared by content (the largest commit of THUDM/slime has 8k, its whole
# history 264k): past them a commit is matched by trailers and patch-id only.
CONTENT_SECONDS = 30.0  # git's own diffing of the downstream history (hostile files: minutes)
MAX_LINE_KEYS = 50_000  # per commit
MAX_INDEX_KEYS = 1_000_000  # in the downstream index (~250 MB)
# Git diffs a file over this as binary (``Binary files ... differ`` and its blob ids, which
# patch-id still hashes): a 98 MB file of ``a\n`` would otherwise cost git 2 GB of line records.
_BIG_FILES = ("-c", f"core.bigFileThreshold={MAX_COMMIT_TEXT}")
# Translation matches made in the upstream diffs of one walk (each costs a few microseconds in
# RE2's Python callback): past them, diffs take no part in matching, as those over the bounds.
MAX_TRANSLATED_MATCHES = 1_000_000


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


# ---------------------------------------------------------------------------------------------
# Diff helpers (pure)


def split_commits(log: bytes) -> list[tuple[str, bytes]]:
    """Split ``git log -p --format='commit %H%n%w(0,4,4)%B'`` output into (sha, text) pairs."""
    marks = list(_COMMIT_LINE.finditer(log))
    return [
        (m.group(1).decode(), log[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(log)])
        for i, m in enumerate(marks)
    ]


@dataclass
class _Held:
    """The bytes of the log held so far (MAX_LOG_TEXT over all commits)."""

    left: int = MAX_LOG_TEXT


def stream_commits(
    chunks: Iterable[bytes], held: _Held | None = None, cap: int = MAX_COMMIT_TEXT
) -> Iterator[tuple[str, bytes, bool]]:
    """``split_commits`` over a stream: ``(sha, text, whole)`` per commit, as it arrives. ``text``
    is cut at ``cap`` bytes (or where ``held`` runs out), and then ``whole`` is False; the bytes
    past the cut are read and dropped, so memory stays bounded whatever one commit holds."""
    held = held if held is not None else _Held()
    sha: str | None = None
    parts: list[bytes] = []
    size = 0
    whole = True
    carry = b""  # the start of a line that may still become ``commit <sha>``
    at_line_start = True  # whether ``carry`` (or the next chunk) starts a line

    def add(piece: bytes) -> None:
        nonlocal size, whole
        if not piece or sha is None:
            return
        if whole and size + len(piece) <= min(cap, size + held.left):
            parts.append(piece)
            size += len(piece)
            held.left -= len(piece)
            return
        if whole:  # keep the head up to the bound: the message and trailers come first
            room = max(0, min(cap, size + held.left) - size)
            parts.append(piece[:room])
            size += room
            held.left -= room
            whole = False

    def done() -> tuple[str, bytes, bool]:
        assert sha is not None
        return sha, b"".join(parts), whole

    for chunk in chunks:
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if len(data) - cut <= len("commit ") + 40:
            body, carry = data[:cut], data[cut:]
        else:  # a long unfinished line cannot be a commit line: pass it on now
            body, carry = data, b""
        pos = 0
        for m in _COMMIT_MARK.finditer(body):
            if m.start() == 0 and not at_line_start:
                continue
            add(body[pos : m.start()])
            if sha is not None:
                yield done()
            sha, parts, size, whole = m.group(1).decode(), [], 0, True
            pos = m.end()
        add(body[pos:])
        if body:
            at_line_start = body.endswith(b"\n")
    add(carry)
    if sha is not None:
        yield done()


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
    content_seconds: float = CONTENT_SECONDS,
) -> DownstreamIndex:
    """Read trailers, patch-ids and changed lines of the downstream's recent history at ``rev``
    (``HEAD``; a report passes the pre-sync baseline, so the sync's own commits don't count).

    ``since`` (an ISO date) bounds the scan: commits older than the upstream base cannot carry
    a PR merged after it. Merges are read for trailers only.
    """
    args = [
        *_BIG_FILES,
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
    prs: dict[int, str] = {}
    commits: dict[str, str] = {}
    lines: dict[str, Counter[bytes]] = {}
    feed: list[bytes] = []  # the whole commits, as the log had them, for patch-id
    want_repo = upstream_repo.lower() if upstream_repo else None
    scanned = too_big = no_content = 0
    budget = MAX_INDEX_KEYS
    tip = git.resolve(repo, rev)
    seen: set[str] = set()

    def read_trailers(sha: str, text: bytes) -> None:
        seen.add(sha)
        commits.setdefault(sha, sha)  # shared history: the very same commit
        msg, trailers = message_of(text), trailers_of(text)
        for m in UPSTREAM_PR_RE.finditer(trailers):
            if want_repo is None or m.group(1) is None or m.group(1).lower() == want_repo:
                prs.setdefault(int(m.group(2)), sha)
        for m in UPSTREAM_COMMIT_RE.finditer(trailers):
            commits.setdefault(m.group(1), sha)
        for picked in cherry_picked(msg):
            commits.setdefault(picked, sha)

    timed_out = False
    current = None
    try:
        for sha, text, whole in stream_commits(git.stream(repo, [*args, tip], deadline=content_seconds)):
            scanned += 1
            current = sha
            read_trailers(sha, text)
            if not whole:
                too_big += 1
                continue
            feed.append(b"commit " + sha.encode() + text)
            body = text.split(b"\ndiff --git ", 1)
            if len(body) == 2:
                keys = line_keys(b"diff --git " + body[1], min(MAX_LINE_KEYS, budget))
                if keys is None:
                    no_content += 1
                    continue
                lines[sha] = keys
                budget -= len(keys)
    except GitTimeout:
        # The commit git was diffing may be cut short: its content is not used, and every commit
        # not read yet is read again without diffs, for its trailers.
        timed_out = True
        if current is not None and feed and feed[-1].startswith(b"commit " + current.encode()):
            feed.pop()
            lines.pop(current, None)
        rest = [a for a in args if a not in ("-p", *_BIG_FILES)]
        for sha, text, _ in stream_commits(git.stream(repo, [*rest, tip])):
            if sha not in seen:
                scanned += 1
                read_trailers(sha, text)
    pids = patch_ids(repo, b"".join(feed))
    del feed
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
        scanned=scanned,
        too_big=too_big,
        no_content=no_content,
        timed_out=timed_out,
    )


@dataclass(frozen=True)
class UpstreamDiff:
    sha: str
    is_merge: bool
    diff: bytes  # path-mapped; a merge's is against its first parent; empty when over the bounds
    whole: bool = True  # False: the diff was over the bounds and takes no part in matching


def upstream_diffs(
    repo: Path, shas: Iterable[str], path_map: PathMap, transform: Transform | None = None
) -> dict[str, UpstreamDiff]:
    """sha -> path-mapped (and translated) diff of each commit, in one ``git log --no-walk --stdin``."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    args = [*_BIG_FILES, "log", "--no-walk=unsorted", "--stdin", "-p", "--no-renames"]
    args.append("--diff-merges=first-parent")
    # Parents go in the indented message area, which patch-id skips.
    fmt = "--format=commit %H%n    %P"
    stdin = "\n".join(wanted).encode() + b"\n"
    out = {}
    left = MAX_TRANSLATED_MATCHES
    log = git.stream(repo, [*args, "--no-color", fmt], input=stdin, deadline=CONTENT_SECONDS)
    try:
        for sha, text, whole in stream_commits(log):
            parents = text.split(b"\n", 2)[1].split() if text.count(b"\n") >= 2 else []
            diff: bytes | None = map_paths(text, path_map) if whole else b""
            if whole and transform is not None:
                diff, used = transform.diff(diff or b"", left) if left > 0 else (None, 0)
                left -= used
            ok = whole and diff is not None
            shown = diff if diff is not None and ok else b""
            out[sha] = UpstreamDiff(sha=sha, is_merge=len(parents) > 1, diff=shown, whole=ok)
    except GitTimeout:
        # git's own diffing ran too long (hostile content): the commit it was on and every later
        # one take no part in content matching, like a diff over the bounds.
        done = [s for s in wanted if s in out]
        if done:
            out.pop(done[-1])
        for s in wanted:
            out.setdefault(s, UpstreamDiff(sha=s, is_merge=False, diff=b"", whole=False))
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
    want = line_keys(whole) if whole else None
    hit = _similar(index, want) if want is not None else None
    if hit:
        return f"similar content ({hit[1]:.0%} of changed lines)", hit[0]
    return None


def _bounded(chunks: Iterable[bytes], cap: int = MAX_COMMIT_TEXT) -> bytes | None:
    """The streamed output, or None (the rest read and dropped) once it is over ``cap``, or when
    git ran past its deadline."""
    parts: list[bytes] = []
    size = 0
    try:
        for chunk in chunks:
            size += len(chunk)
            if size <= cap:
                parts.append(chunk)
            elif parts:
                parts.clear()
    except GitTimeout:
        return None
    return b"".join(parts) if size <= cap else None


def _feed(items: Iterable[tuple[str, bytes]]) -> bytes:
    return b"".join(b"commit " + key.encode() + b"\n" + text + b"\n" for key, text in items)


def mark_mirrored(
    upstream: Path,
    prs: Sequence[PullRequest],
    index: DownstreamIndex,
    path_map: Sequence[tuple[str, str]] = (),
    notes: list[str] | None = None,
    *,
    accept_similar: bool = False,
    transform: Transform | None = None,
) -> tuple[PullRequest, ...]:
    """``prs`` with a MIRRORED decision for those the downstream carries (others unchanged).
    ``notes`` gets a line when some PR's diff was over the bounds (matched by trailers only).

    Similar content only suggests: anyone who gets a PR merged upstream can add another pending
    PR's changed lines somewhere (dead code) and make it look carried. Such a PR stays as it was
    (applicable), its reason saying it looks mirrored, unless ``accept_similar``.

    ``transform`` (the carry's path map and translations) rewrites the upstream diffs as the
    carry would; without it, ``path_map`` alone."""
    pm = transform.path_map if transform is not None else PathMap(tuple(path_map))
    todo = [
        pr
        for pr in prs
        if pr.number not in index.prs and not any(_lookup_commit(index, s) for s in pr.commits)
    ]
    diffs = upstream_diffs(upstream, (s for pr in todo for s in pr.commits), pm, transform)
    wholes: dict[str, bytes] = {}
    too_big = {pr.number for pr in todo if any(s in diffs and not diffs[s].whole for s in pr.commits)}
    for pr in todo:
        singles = [s for s in pr.commits if s in diffs and not diffs[s].is_merge]
        if pr.kind is PrKind.REBASE and len(singles) > 1:
            # One diff over the whole rebase-merged series, for a downstream that squashed it.
            args = [*_BIG_FILES, "diff", "--no-renames", "--no-color", f"{pr.commits[0]}^", pr.merge_commit]
            try:
                diff = _bounded(git.stream(upstream, args, deadline=CONTENT_SECONDS))
            except GitError:  # the series starts at the root commit: its per-commit ids still count
                continue
            if diff is not None and transform is not None:
                diff = transform.diff(map_paths(diff, pm), MAX_TRANSLATED_MATCHES)[0]
            elif diff is not None:
                diff = map_paths(diff, pm)
            if diff is None:
                too_big.add(pr.number)
            else:
                wholes[pr.merge_commit] = diff
        elif pr.merge_commit in diffs:
            wholes[pr.merge_commit] = diffs[pr.merge_commit].diff
    ids = patch_ids(upstream, _feed((sha, d.diff) for sha, d in diffs.items()))
    # Whole diffs under their own keys: the fake "commit" ids are only labels for patch-id.
    labels = {f"{i:040x}": m for i, m in enumerate(wholes, start=1)}
    for label, pid in patch_ids(upstream, _feed((lb, wholes[m]) for lb, m in labels.items())).items():
        ids["whole:" + labels[label]] = pid
    if too_big and notes is not None:
        shown = ", ".join(f"#{n}" for n in sorted(too_big)[:5]) + (", ..." if len(too_big) > 5 else "")
        notes.append(
            f"{len(too_big)} upstream PR(s) ({shown}) have a diff over {MAX_COMMIT_TEXT >> 20} MiB:"
            " only trailers can show them mirrored"
        )
    out = []
    for pr in prs:
        found = find_mirror(pr, index, diffs, ids, wholes.get(pr.merge_commit, b""))
        if found is None:
            out.append(pr)
            continue
        how, down = found
        if how.startswith("similar content") and not accept_similar:
            was = pr.decision or Decision(status=APPLICABLE, reason="")
            looks = f"{how} in {down[:12]}"
            why = f"looks mirrored ({looks}): not counted as carried without --accept-similar"
            reason = f"{was.reason}; {why}" if was.reason else why
            out.append(replace(pr, decision=replace(was, reason=reason, looks_mirrored=looks)))
            continue
        decision = Decision(
            status=MIRRORED, reason=f"already downstream: {how} in {down[:12]}", mirrored_by=how
        )
        out.append(replace(pr, decision=decision))
    return tuple(out)


def mark_direct_mirrored(directs: Sequence[DirectCommit], index: DownstreamIndex) -> tuple[DirectCommit, ...]:
    """``directs`` with ``mirrored_by`` set for those a downstream commit names (its
    ``Upstream-Commit:`` trailer, a ``cherry-pick -x`` line, or the same commit): a direct push
    carried by ``carry --direct include`` is then not carried again."""
    out = []
    for c in directs:
        down = _lookup_commit(index, c.sha)
        if down is None:
            out.append(c)
            continue
        how = "same commit" if down == c.sha else "trailer Upstream-Commit/cherry-picked"
        out.append(replace(c, mirrored_by=f"{how} in {down[:12]}"))
    return tuple(out)
