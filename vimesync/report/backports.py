"""Backport candidates: the engine commits after a git pin that touch what the patch stack touches.

One ``git log --first-parent --diff-merges=first-parent -p -U0 --reverse TIP ^PIN -- <the stack's
files>`` is streamed (bounded in bytes and time), oldest first. First-parent, because that is the
line a release branch or ``main`` moves along: one entry per landed PR (a merge commit diffed
against its first parent), with the PR number its subject or merge message carries.

"Touches the same lines" is exact along that line: every stack hunk's pre-image range is taken in
the pin's numbering (a later patch's hunk mapped back through the earlier patches on the same
file), and then carried forward through each commit's diff in turn, so a commit's ``-U0`` hunks
(numbered as its first parent) are compared with where the stack's lines are at its first parent.
A commit whose hunk overlaps a range is "same-lines", one that only changes the file elsewhere is
"same-file". Renames are not followed (``--no-renames``): a patched file renamed upstream stops
being tracked at the rename, which shows as a "same-lines" deletion.

Commit messages are upstream-written: kept bounded here, escaped by whoever prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.errors import BadInput, PatchError
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import Hunk, PatchFile
from vimesync.upstream.messages import pr_number, split_suffix
from vimesync.upstream.model import Commit

Relation = Literal["same-lines", "same-file"]
MAX_CANDIDATES = 50  # listed by default (--max-candidates); the rest are counted
MAX_LOG_BYTES = 64 << 20  # of the streamed log; past it the commits read so far are used
MAX_COMMIT_BYTES = 8 << 20  # of one commit's diff on the patched files; a larger one is "same-lines"
MAX_PATHS = 2000  # pathspecs on one command line
MAX_SUBJECT = 512  # characters kept of a subject (its "(#N)" found before the cut)
LOG_SECONDS = 120.0

# Every record starts with two NULs; the letters keep an empty message or diff from making two more.
_FORMAT = "%x00%x00%H %P%x00m%B%x00d"


@dataclass(frozen=True)
class Span:
    """Lines ``start`` to ``end - 1`` (1-based) of one file; ``start == end``: the point between
    lines ``start - 1`` and ``start`` (a hunk that only adds there)."""

    start: int
    end: int


@dataclass(frozen=True)
class Candidate:
    sha: str
    pr: int | None  # from the subject "(#N)" or "Merge pull request #N"
    subject: str  # upstream-written: escape it where it is printed
    files: tuple[str, ...]  # the stack's files it changes
    relation: Relation
    patches: tuple[str, ...]  # the patches whose lines (same-lines) or files (same-file) it touches


@dataclass(frozen=True)
class Backports:
    to: str  # the revision asked for
    tip: str  # its commit
    candidates: tuple[Candidate, ...]  # newest first, at most the cap
    total: int  # candidates before the cap
    read: int  # commits read after the pin on the patched files
    notes: tuple[str, ...] = ()

    @property
    def left_off(self) -> int:
        return self.total - len(self.candidates)


def candidates_doc(candidates: Iterable[Candidate]) -> list[dict[str, object]]:
    """The ``--json`` list of commits (``pin radar``'s candidates, ``pin bump``'s changelog)."""
    return [
        {
            "sha": c.sha,
            "pr": c.pr,
            "subject": c.subject,
            "files": list(c.files),
            "relation": c.relation,
            "patches": list(c.patches),
        }
        for c in candidates
    ]


# ---------------------------------------------------------------------------------------------
# Line ranges (pure)


def hunk_spans(h: Hunk | tuple[int, int, int, int]) -> tuple[Span, Span]:
    """A hunk's old and new side as spans (``-5,0`` adds after line 5: the point 6)."""
    os_, oc, ns, nc = (h.old_start, h.old_count, h.new_start, h.new_count) if isinstance(h, Hunk) else h
    old = Span(os_, os_ + oc) if oc else Span(os_ + 1, os_ + 1)
    new = Span(ns, ns + nc) if nc else Span(ns + 1, ns + 1)
    return old, new


def _point(x: int, sides: Sequence[tuple[Span, Span]], *, end: bool) -> int:
    """Where the boundary before old line ``x`` is after the change (``sides``: old, new spans in
    order). Inside a changed range it goes to that range's new start (``end``: its new end)."""
    shift = 0
    for old, new in sides:
        if old.start == old.end:  # an insertion at old.start
            if old.start < x or (old.start == x and not end):
                shift += new.end - new.start
            continue
        if old.end <= x:
            shift += (new.end - new.start) - (old.end - old.start)
        elif old.start < x:  # x falls inside the changed lines
            return new.end if end else new.start
        else:
            break
    return x + shift


def map_span(span: Span, sides: Sequence[tuple[Span, Span]]) -> Span:
    """``span`` after a change (its hunks' old/new spans, in file order): lines the change rewrote
    at either end stretch the span to cover what replaced them; a span whose lines are all gone
    becomes the point where they were."""
    start = _point(span.start, sides, end=False)
    end = _point(span.end, sides, end=True) if span.end > span.start else start
    return Span(start, max(start, end))


def overlaps(change: Span, span: Span) -> bool:
    """Does a commit's changed old range ``change`` touch the stack's ``span``? An insertion
    counts inside the span (not at its edges); a point span (a stack hunk that only adds) is
    touched by a change of the line on either side of it."""
    if span.start == span.end:
        span = Span(span.start - 1, span.end + 1)
    if change.start == change.end:
        return span.start < change.start < span.end
    return change.start < span.end and span.start < change.end


# ---------------------------------------------------------------------------------------------
# The stack's files and lines


@dataclass(frozen=True)
class StackLines:
    files: dict[str, tuple[str, ...]]  # path at the pin -> the patches that change it
    spans: dict[str, list[tuple[Span, str]]]  # path -> (pre-image span in the pin's numbering, patch)


def stack_lines(stack: Sequence[PatchFile]) -> StackLines:
    """Every file the stack changes (either name of a rename), and each hunk's pre-image span in
    the pin's numbering: mapped back through the earlier patches' hunks on that file."""
    files: dict[str, list[str]] = {}
    spans: dict[str, list[tuple[Span, str]]] = {}
    earlier: dict[str, list[list[tuple[Span, Span]]]] = {}  # path -> earlier patches' (new, old)
    for patch in stack:
        for fp in patch.files:
            for path in {p for p in (fp.old_path, fp.new_path) if p}:
                names = files.setdefault(path, [])
                if patch.name not in names:
                    names.append(patch.name)
            if fp.old_path is None or fp.old_path != fp.new_path:
                continue  # created, deleted or renamed: no lines of the pin's file to track
            path = fp.old_path
            sides = [hunk_spans(h) for h in fp.hunks]
            for old, _ in sides:
                span = old
                for back in reversed(earlier.get(path, [])):
                    span = map_span(span, back)
                spans.setdefault(path, []).append((span, patch.name))
            earlier.setdefault(path, []).append([(new, old) for old, new in sides])
    return StackLines({p: tuple(n) for p, n in files.items()}, spans)


# ---------------------------------------------------------------------------------------------
# The log


@dataclass(frozen=True)
class _Entry:
    commit: Commit
    diff: PatchFile | None  # None: the diff could not be read (too big, unparseable)
    paths: tuple[str, ...]  # the files its diff names (when diff is None: from the headers)


def log_args(pin: str, tip: str, paths: Iterable[str]) -> list[str]:
    return [
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        "-p",
        "-U0",
        "--no-renames",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        f"--format={_FORMAT}",
        tip,
        f"^{pin}",
        "--",
        *(f":(literal){p}" for p in paths),
    ]


def _records(chunks: Iterable[bytes], max_bytes: int) -> Iterator[tuple[bytes, bytes, bytes] | None]:
    """(ids, message, diff) per commit as the log streams; None once ``max_bytes`` were read."""
    buf = bytearray()
    seen = 0
    for chunk in chunks:
        seen += len(chunk)
        # a record: \0\0ids\0message\0diff, until the next \0\0 (no diff or path holds a NUL);
        # the search resumes where the last one stopped, so a long record costs one pass
        start = max(2, len(buf) - 1)
        buf += chunk
        while (nxt := buf.find(b"\0\0", start)) != -1:
            yield _split(bytes(buf[:nxt]))
            del buf[:nxt]
            start = 2
        if seen > max_bytes:
            yield None
            return
    if buf:
        yield _split(bytes(buf))


def _split(record: bytes) -> tuple[bytes, bytes, bytes]:
    parts = record[2:].split(b"\0", 2)
    while len(parts) < 3:
        parts.append(b"")
    return parts[0], parts[1][1:], parts[2][1:]


def _diff_paths(diff: bytes) -> tuple[str, ...]:
    """The b/ names of a diff's ``diff --git`` lines (a fallback when it cannot be parsed)."""
    out = []
    for line in diff.split(b"\n"):
        if line.startswith(b"diff --git a/"):
            _, _, b = line.partition(b" b/")
            out.append(b.decode("utf-8", "replace"))
    return tuple(out)


def _entries(repo: Path, pin: str, tip: str, paths: Sequence[str], notes: list[str]) -> Iterator[_Entry]:
    chunks = git.stream(repo, log_args(pin, tip, paths), deadline=LOG_SECONDS)
    for rec in _records(chunks, MAX_LOG_BYTES):
        if rec is None:
            notes.append(
                f"the log after the pin passed {_size(MAX_LOG_BYTES)}: only the commits read by then "
                "(the oldest) were looked at"
            )
            return
        ids_b, message_b, diff = rec
        ids = ids_b.decode("ascii", "replace").split()
        if not ids or len(ids[0]) != 40:
            continue
        message = message_b.decode("utf-8", "replace")
        subject, _, body = message.partition("\n")
        commit = Commit(ids[0], tuple(ids[1:]), _subject(subject.strip()), body.strip("\n")[:4096])
        diff = diff.lstrip(b"\n")
        parsed = None
        if len(diff) <= MAX_COMMIT_BYTES:
            try:
                parsed = parse_patch(diff, name=f"commit {ids[0][:12]}", strip=1)
            except PatchError:
                parsed = None
        names = (
            tuple(dict.fromkeys(p for f in parsed.files for p in (f.old_path, f.new_path) if p))
            if parsed is not None
            else _diff_paths(diff)
        )
        yield _Entry(commit, parsed, names)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def _subject(subject: str) -> str:
    if len(subject) <= MAX_SUBJECT:
        return subject
    title, number = split_suffix(subject)
    suffix = "" if number is None else f" (#{number})"
    return title[: MAX_SUBJECT - len(suffix) - 1] + "…" + suffix


# ---------------------------------------------------------------------------------------------
# The candidates


def find_backports(
    repo: Path,
    pin: str,
    to: str,
    stack: Sequence[PatchFile],
    *,
    max_candidates: int = MAX_CANDIDATES,
) -> Backports:
    """The first-parent commits of ``to`` after ``pin`` that change the stack's files, newest
    first, each "same-lines" or "same-file" (module docstring)."""
    try:
        tip = git.resolve(repo, to)
    except BadInput as exc:
        raise BadInput(f"--to: {exc.message}") from None
    notes: list[str] = []
    lines = stack_lines(stack)
    paths = sorted(lines.files)
    if len(paths) > MAX_PATHS:
        notes.append(f"the stack changes {len(paths)} files: the first {MAX_PATHS} (by name) were followed")
        paths = paths[:MAX_PATHS]
    if not git.is_ancestor(repo, pin, tip):
        notes.append(
            "the pin is not on the first-parent history of --to: commits of --to not in the pin are "
            "listed, and 'same lines' is measured from the pin's numbering (approximate)"
        )
    spans = {p: list(lines.spans.get(p, [])) for p in paths}
    found: list[Candidate] = []
    read = 0
    if paths:
        for entry in _entries(repo, pin, tip, paths, notes):
            read += 1
            cand = _judge(entry, lines.files, spans)
            if cand is not None:
                found.append(cand)
    found.reverse()  # newest first
    cap = max(0, max_candidates)
    return Backports(to, tip, tuple(found[:cap]), len(found), read, tuple(notes))


def _judge(
    entry: _Entry, files: dict[str, tuple[str, ...]], spans: dict[str, list[tuple[Span, str]]]
) -> Candidate | None:
    """One commit against the stack's spans (which it then moves to its own numbering)."""
    touched = tuple(p for p in entry.paths if p in files)
    if not touched:
        return None
    same_lines: list[str] = []
    if entry.diff is None:
        # unreadable diff: every span of its files is assumed touched, and no longer trackable
        for p in touched:
            same_lines += [name for _, name in spans.get(p, [])]
            spans[p] = []
    else:
        for fp in entry.diff.files:
            path = fp.old_path or fp.new_path
            if path not in spans:
                continue
            if fp.new_path is None or fp.binary is not None or fp.binary_without_data:
                same_lines += [name for _, name in spans[path]]  # deleted or binary: all of it
                spans[path] = [] if fp.new_path is None else spans[path]
                continue
            sides = [hunk_spans(h) for h in fp.hunks]
            for span, name in spans[path]:
                if any(overlaps(old, span) for old, _ in sides):
                    same_lines.append(name)
            spans[path] = [(map_span(span, sides), name) for span, name in spans[path]]
    if same_lines:
        relation: Relation = "same-lines"
        patches = tuple(dict.fromkeys(same_lines))
    else:
        relation = "same-file"
        patches = tuple(dict.fromkeys(n for p in touched for n in files[p]))
    c = entry.commit
    return Candidate(c.sha, pr_number(c), c.subject, touched, relation, patches)
