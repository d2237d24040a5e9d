"""First-parent walk of an upstream range ``BASE..TIP`` into merged PRs and direct commits.

One streamed ``git log --first-parent`` gives every first-parent commit with its message and
changed paths (merges diffed against their first parent); one ``git rev-list --parents`` of
the range, only when the first-parent line carries merges, tells which side commits each
merge brought in. Nothing walks git objects one by one.

Attribution, per first-parent commit:

- ``Merge pull request #N from …`` (any merge naming a PR) is PR N and owns ``M^1..M``,
  including merges of a fork's own PRs it carries (those are not upstream PRs);
- a subject ending in ``(#N)`` is PR N (squash; several such commits are one rebase-merged PR);
- anything else is a direct commit.

``Revert "…"`` commits (PRs or direct) are linked to the PR they revert when it can be found.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from vimesync import git
from vimesync.errors import BadInput, GitError
from vimesync.upstream.model import Commit, DirectCommit, PrKind, PullRequest, WalkResult

_T = TypeVar("_T", PullRequest, DirectCommit)

# Commit messages are hostile input: every pattern here runs in linear time on any text, and PR
# numbers are at most 9 digits (int() of thousands of digits is slow, and no PR has them).
MERGE_PR_RE = re.compile(r"^Merge pull request #(\d{1,9}) from \S")
_SUFFIX_TAIL_RE = re.compile(r"\(#(\d{1,9})\)\Z")  # matched on the right-stripped end only
_SUFFIX_TAIL = len("(#123456789)")
REVERT_RE = re.compile(r'^Revert "(.*)"(?:\s*\(#\d+\))?\s*$')
REVERTS_SHA_RE = re.compile(r"This reverts commit ([0-9a-f]{7,40})")

MAX_MESSAGE = 1 << 20  # bytes kept of a commit message (and of any token of the log); the rest is skipped
MAX_SUBJECT = 4096  # characters kept of a subject

# NUL-separated fields; every record starts with two NULs, which a path (never empty) cannot produce.
_LOG_FORMAT = "%x00%x00%H %P%x00%an <%ae>%x00%cI%x00%B"
_HEADER_FIELDS = 4


@dataclass(frozen=True)
class FirstParent:
    """One commit of TIP's first-parent line with the paths it changed against its first parent."""

    commit: Commit
    paths: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# Parsing (pure)


def _tokens(chunks: Iterable[bytes], limit: int = MAX_MESSAGE) -> Iterator[bytes]:
    """NUL-separated tokens of a stream, each cut to ``limit`` bytes: linear in the stream, and a
    50 MB commit message costs one pass over it, never a copy per chunk.

    A token cut inside its first line keeps that line's last ``_SUFFIX_TAIL`` bytes after its
    head, so a subject padded past the cap keeps its ``(#N)`` suffix."""
    parts: list[bytes] = []
    kept = 0
    tail = b""  # of the first line, while it runs past the cap
    in_line = True  # the skipped bytes still belong to the first line

    def cut(piece: bytes) -> None:
        nonlocal tail, in_line
        if in_line:
            nl = piece.find(b"\n")
            if nl != -1:
                piece, in_line = piece[:nl], False
            piece = piece.rstrip()  # trailing blanks after a suffix must not push it out
            if piece:
                tail = (tail + piece[-_SUFFIX_TAIL:])[-_SUFFIX_TAIL:]

    def token() -> bytes:
        head = b"".join(parts) if len(parts) != 1 else parts[0]
        return head + tail if tail and b"\n" not in head else head

    for chunk in chunks:
        pieces = chunk.split(b"\0")  # one C-level pass; the last piece has no NUL after it (yet)
        last = len(pieces) - 1
        for i, piece in enumerate(pieces):
            if i == last and not piece:
                break  # the chunk ended on a NUL: no token has started
            if i < last and len(piece) <= limit and not parts and not tail and in_line:
                yield piece  # the common case: a whole, short token, none in progress
                continue
            if kept < limit:
                room = limit - kept
                parts.append(piece[:room])
                kept += min(len(piece), room)
                if len(piece) > room:
                    cut(piece[room:])
            else:
                cut(piece)
            if i < last:
                yield token()
                parts, kept, tail, in_line = [], 0, b"", True
    if parts:
        yield token()


def parse_log(chunks: Iterable[bytes]) -> Iterator[FirstParent]:
    """Parse the output of ``git log -z --name-only --format=_LOG_FORMAT`` as it streams.

    Tokens (split on NUL): ``"" "" "<sha> <parents>" author date message path…``; the path list
    ends at the next record's first empty token (paths are never empty).
    """
    it = _tokens(chunks)
    tok = next(it, None)
    while tok is not None:
        if tok != b"" or next(it, None) != b"":
            tok = next(it, None)  # not a record start: cannot happen with our format; resync
            continue
        # the _HEADER_FIELDS fields, unrolled (this loop runs once per first-parent commit)
        ids_b, author, date, message = next(it, b""), next(it, b""), next(it, b""), next(it, b"")
        ids = ids_b.decode().split()
        paths: list[str] = []
        tok = next(it, None)
        if tok:
            paths.append(tok.lstrip(b"\n").decode("utf-8", "surrogateescape"))
            tok = next(it, None)
            while tok:
                paths.append(tok.decode("utf-8", "surrogateescape"))
                tok = next(it, None)
        if not ids:
            continue
        subject, _, body = message.decode("utf-8", "replace").partition("\n")
        commit = Commit(
            sha=ids[0],
            parents=tuple(ids[1:]),
            subject=_kept_subject(subject.strip()),
            body=body.strip("\n"),
            author=author.decode("utf-8", "replace"),
            date=date.decode(),
        )
        yield FirstParent(commit=commit, paths=tuple(paths))


def split_suffix(subject: str) -> tuple[str, int | None]:
    """``("Fix x", 12)`` for ``"Fix x (#12)"``; ``(subject, None)`` without a ``(#N)`` suffix.

    Only the end of the right-stripped subject is looked at, so a long run of spaces costs one
    pass (a ``\\s*\\(#\\d+\\)\\s*$`` search is quadratic on it).
    """
    text = subject.rstrip()
    m = _SUFFIX_TAIL_RE.search(text, max(0, len(text) - _SUFFIX_TAIL))
    if m is None:
        return subject, None
    return text[: m.start()].rstrip(), int(m.group(1))


def _kept_subject(subject: str) -> str:
    """``subject`` cut to MAX_SUBJECT characters for display, its ``(#N)`` suffix kept: the suffix
    is found on the whole first line (one pass from its end) before the cut, so padding a subject
    cannot turn a PR into a direct commit."""
    if len(subject) <= MAX_SUBJECT:
        return subject
    title, number = split_suffix(subject)
    suffix = "" if number is None else f" (#{number})"
    return title[: MAX_SUBJECT - len(suffix)] + suffix


def pr_number(commit: Commit) -> int | None:
    """The PR a first-parent commit lands, from its subject; None for a direct commit."""
    if m := MERGE_PR_RE.match(commit.subject):
        return int(m.group(1))
    return split_suffix(commit.subject)[1]


def pr_title(commit: Commit) -> str:
    """The PR title as git records it: GitHub puts it on the first body line of a PR merge."""
    if MERGE_PR_RE.match(commit.subject):
        for line in commit.body.splitlines():
            if line.strip():
                return line.strip()
        return commit.subject
    return split_suffix(commit.subject)[0].strip()


def revert_target(commit: Commit) -> tuple[str | None, str | None]:
    """(reverted sha from the body, reverted subject from the quotes) for a revert commit."""
    m = REVERT_RE.match(commit.subject)
    sha_m = REVERTS_SHA_RE.search(commit.body)
    if not m and not sha_m:
        return None, None
    return (sha_m.group(1) if sha_m else None), (m.group(1) if m else None)


# ---------------------------------------------------------------------------------------------
# Attribution (pure)


def owned_side_commits(
    first_parents: list[FirstParent], graph: dict[str, tuple[str, ...]], order: dict[str, int]
) -> dict[str, tuple[str, ...]]:
    """For each first-parent merge, the range commits it brought in (``M^1..M`` minus M), oldest first.

    ``graph`` maps every commit of the range to its parents. Walking oldest first, whatever the
    earlier first-parent commits reached is claimed; a merge owns what its other parents reach
    inside the range that is not claimed yet (exactly ``M^1..M`` restricted to the range).
    """
    claimed: set[str] = set()
    owned: dict[str, tuple[str, ...]] = {}
    for fp in first_parents:
        c = fp.commit
        claimed.add(c.sha)
        if len(c.parents) < 2:
            continue
        found: list[str] = []
        stack = [p for p in c.parents[1:] if p in graph and p not in claimed]
        while stack:
            sha = stack.pop()
            if sha in claimed:
                continue
            claimed.add(sha)
            found.append(sha)
            stack.extend(p for p in graph[sha] if p in graph and p not in claimed)
        owned[c.sha] = tuple(sorted(found, key=lambda s: order.get(s, 0)))
    return owned


def attribute(
    first_parents: list[FirstParent],
    owned: dict[str, tuple[str, ...]],
    outside: Callable[[str], str | None] | None = None,
) -> tuple[list[PullRequest], list[DirectCommit]]:
    """Group first-parent commits (oldest first) into PRs and direct commits; link reverts.

    ``outside(sha)`` gives the subject of a reverted commit that is not in the range, if known.
    """
    groups: dict[int, list[FirstParent]] = {}
    direct: list[FirstParent] = []
    for fp in first_parents:
        n = pr_number(fp.commit)
        if n is None:
            direct.append(fp)
        else:
            groups.setdefault(n, []).append(fp)

    prs: list[PullRequest] = []
    for n, fps in groups.items():
        commits: list[str] = []
        paths: set[str] = set()
        for fp in fps:
            commits.extend(owned.get(fp.commit.sha, ()))
            commits.append(fp.commit.sha)
            paths.update(fp.paths)
        is_merge = any(len(fp.commit.parents) > 1 for fp in fps)
        kind = PrKind.MERGE if is_merge else (PrKind.SQUASH if len(fps) == 1 else PrKind.REBASE)
        prs.append(
            PullRequest(
                number=n,
                title=pr_title(fps[0].commit),
                commits=tuple(commits),
                paths=tuple(sorted(paths)),
                merge_commit=fps[-1].commit.sha,
                kind=kind,
                author=fps[-1].commit.author,
            )
        )
    position = {fp.commit.sha: i for i, fp in enumerate(first_parents)}
    prs.sort(key=lambda p: position[p.merge_commit])
    directs = [
        DirectCommit(
            sha=fp.commit.sha,
            title=fp.commit.subject,
            paths=fp.paths,
            side_commits=owned.get(fp.commit.sha, ()),
        )
        for fp in direct
    ]
    return _link_reverts(first_parents, prs, directs, outside)


def _prefixed(sorted_keys: list[str], values: dict[str, int], prefix: str) -> set[int | None]:
    """The values of the keys starting with ``prefix``, up to two (the caller wants one or none):
    a bisection, so many reverts of abbreviated shas never each scan every commit of the range."""
    found: set[int | None] = set()
    i = bisect.bisect_left(sorted_keys, prefix)
    while i < len(sorted_keys) and sorted_keys[i].startswith(prefix) and len(found) < 2:
        found.add(values[sorted_keys[i]])
        i += 1
    return found


def _link_reverts(
    first_parents: list[FirstParent],
    prs: list[PullRequest],
    directs: list[DirectCommit],
    outside: Callable[[str], str | None] | None,
) -> tuple[list[PullRequest], list[DirectCommit]]:
    by_sha: dict[str, int] = {}
    by_title: dict[str, list[tuple[int, int]]] = {}  # title -> [(first-parent position, PR)]
    position = {fp.commit.sha: i for i, fp in enumerate(first_parents)}
    for pr in prs:
        for sha in pr.commits:
            by_sha[sha] = pr.number
        by_title.setdefault(pr.title, []).append((position[pr.merge_commit], pr.number))
    commit_of = {fp.commit.sha: fp.commit for fp in first_parents}
    sorted_shas = sorted(by_sha)

    def find(commit: Commit, own: int | None) -> int | None:
        sha, subject = revert_target(commit)
        if sha:
            hits = _prefixed(sorted_shas, by_sha, sha) if len(sha) < 40 else {by_sha.get(sha)}
            hits.discard(None)
            if len(hits) == 1:
                return hits.pop()
            if not hits and outside is not None:  # reverts something before BASE: ask git
                before = outside(sha)
                n = pr_number(Commit(sha=sha, parents=(), subject=before)) if before else None
                if n is not None and n != own:
                    return n
        if subject is None:
            return None
        quoted = subject.strip()
        if m := MERGE_PR_RE.match(quoted):  # reverting a merge commit names its PR outright
            return int(m.group(1))
        # The latest PR with that title that landed before the revert.
        here = position[commit.sha]
        for key in (quoted, pr_title(Commit(sha="", parents=(), subject=quoted))):
            candidates = [n for pos, n in by_title.get(key, []) if pos < here and n != own]
            if candidates:
                return candidates[-1]
        # Cites its PR number: trust it even outside the range.
        return split_suffix(quoted)[1]

    def linked(item: _T, reverts: int | None) -> _T:
        # dataclasses.replace costs more than the rest of the linking: only for actual reverts.
        return item if reverts == item.reverts else replace(item, reverts=reverts)

    linked_prs = [linked(pr, find(commit_of[pr.merge_commit], pr.number)) for pr in prs]
    linked_directs = [linked(d, find(commit_of[d.sha], None)) for d in directs]
    return linked_prs, linked_directs


# ---------------------------------------------------------------------------------------------
# git I/O


def log_args(base: str | None, tip: str) -> list[str]:
    """The one ``git log`` the walk streams (exposed for the benchmark)."""
    args = [
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--name-only",
        "--no-renames",  # a rename is two changed paths, both seen by path rules
        "-z",
        f"--format={_LOG_FORMAT}",
        tip,
    ]
    if base:
        args.append(f"^{base}")
    return args


def _range_graph(repo: Path, base: str | None, tip: str) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    args = ["rev-list", "--topo-order", "--reverse", "--parents", tip] + ([f"^{base}"] if base else [])
    graph: dict[str, tuple[str, ...]] = {}
    order: dict[str, int] = {}
    for i, line in enumerate(git.run(repo, args).decode().splitlines()):
        ids = line.split()
        graph[ids[0]] = tuple(ids[1:])
        order[ids[0]] = i
    return graph, order


class _RangeGraph:
    """:func:`_range_graph` on a helper thread (git does the work; the thread only waits and
    splits lines), so that it overlaps the first-parent log; :meth:`result` joins it and
    re-raises what it raised."""

    def __init__(self, repo: Path, base: str | None, tip: str) -> None:
        self._out: tuple[dict[str, tuple[str, ...]], dict[str, int]] | None = None
        self._exc: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(repo, base, tip), name="vimesync-range-graph", daemon=True
        )
        self._thread.start()

    def _run(self, repo: Path, base: str | None, tip: str) -> None:
        try:
            self._out = _range_graph(repo, base, tip)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._exc = exc

    def result(self) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        assert self._out is not None
        return self._out


def check_range(
    repo: Path, base: str | None, tip: str, *, tip_sha: str | None = None
) -> tuple[str | None, str, bool]:
    """Resolve and validate a range: (base sha or None for the root, tip sha, empty?).
    ``tip_sha``: what ``tip`` resolved to, when the caller has just asked git.

    Only BASE == TIP is empty. BadInput when BASE is not an ancestor of TIP: a reversed range
    (TIP an ancestor of BASE) says so; otherwise it says what git's ``BASE..TIP`` would walk.
    """
    try:
        tip_sha = tip_sha or git.resolve(repo, tip)
    except GitError:
        git.git_dir(repo)  # not a repository (or refused) says so first, as before
        raise
    # (A tip that resolves is in a repository: no separate git_dir query, one git process less.)
    if not base or base == git.NULL_SHA:
        return None, tip_sha, False
    base_sha = git.resolve(repo, base)
    if base_sha == tip_sha:
        return base_sha, tip_sha, True
    if git.is_ancestor(repo, base_sha, tip_sha):
        return base_sha, tip_sha, False
    if git.is_ancestor(repo, tip_sha, base_sha):
        # git would walk nothing, but "nothing to sync" would hide a swapped range.
        raise BadInput(
            f"TIP {tip} ({tip_sha[:12]}) is an ancestor of BASE {base} ({base_sha[:12]}): "
            f"the range is reversed; did you mean {tip}..{base}?",
            hint=(
                "BASE is the last-synced (older) commit, TIP the newer one; "
                "if TIP is a branch, the clone may need a fetch"
            ),
        )
    out = git.run(repo, ["merge-base", base_sha, tip_sha], check=False).decode().split()
    what = (
        f"{base} ({base_sha[:12]}) is not an ancestor of {tip} ({tip_sha[:12]}): {tip}'s history does not "
        f"contain {base}, so {base}..{tip} is not 'the commits since {base}' (was upstream rewritten, or is "
        "the recorded sync point on another branch or from another repository?)"
    )
    if not out:
        raise BadInput(what, hint=f"{base} and {tip} share no history at all; nothing sensible can be walked")
    mb = out[0]
    count = git.run(repo, ["rev-list", "--first-parent", "--count", tip_sha, f"^{mb}"]).decode().strip()
    subject = git.run(repo, ["log", "-1", "--format=%s", mb]).decode().strip()
    raise BadInput(
        what,
        hint=(
            f"git's {base}..{tip} means the {count} first-parent commits since their merge-base "
            f"{mb[:12]} ({subject!r}); nothing was walked. To walk exactly those: --range {mb[:12]}..{tip}"
        ),
    )


class _Subjects:
    """Subjects of commits outside the range, read on demand through one ``git cat-file --batch``."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._cat: git.CatFile | None = None

    def __call__(self, sha: str) -> str | None:
        if self._cat is None:
            self._cat = git.CatFile(self.repo)
        try:
            raw = self._cat.read(sha)
        except (GitError, IndexError, ValueError):  # unknown or ambiguous (short) sha
            return None
        _, _, message = raw.partition(b"\n\n")
        return message.decode("utf-8", "replace").partition("\n")[0].strip() or None

    def __enter__(self) -> _Subjects:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cat is not None:
            self._cat.close()


def walk(repo: Path, base: str | None, tip: str, *, tip_sha: str | None = None) -> WalkResult:
    """Walk ``base..tip`` of ``repo`` (a clone or bare mirror) into PRs and direct commits.

    ``base`` None (or the null sha) walks TIP's whole history down to the root commit. The
    result has no decisions yet. BASE == TIP gives an empty result; BASE not an ancestor of TIP
    (a reversed range included) is BadInput. ``tip_sha``: TIP already resolved by the caller.
    """
    base_sha, tip_sha, empty = check_range(repo, base, tip, tip_sha=tip_sha)
    base_out = base_sha or git.NULL_SHA
    if empty:
        return WalkResult(base=base_out, tip=tip_sha, prs=(), direct_commits=())
    first_parents: list[FirstParent] = []
    graph_reader: _RangeGraph | None = None
    for fp in parse_log(git.stream(repo, log_args(base_sha, tip_sha))):
        first_parents.append(fp)
        if graph_reader is None and len(fp.commit.parents) > 1:
            # The first merge seen: read the graph while the rest of the log streams.
            graph_reader = _RangeGraph(repo, base_sha, tip_sha)
    first_parents.reverse()  # oldest first
    owned: dict[str, tuple[str, ...]] = {}
    if graph_reader is not None:
        graph, order = graph_reader.result()
        owned = owned_side_commits(first_parents, graph, order)
    with _Subjects(repo) as subjects:
        prs, directs = attribute(first_parents, owned, subjects)
    return WalkResult(
        base=base_out,
        tip=tip_sha,
        prs=tuple(prs),
        direct_commits=tuple(directs),
        first_parents=tuple(fp.commit.sha for fp in first_parents),
    )
