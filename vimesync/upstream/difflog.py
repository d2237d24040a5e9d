"""A ``git log -p`` (or ``git diff``) read as it streams, split into commits as they come.

Both histories are hostile input (a PR commit can add a 98 MB file that compresses to 100 KB):
the log is read as a stream and split as it comes, each commit's text is held up to
MAX_COMMIT_TEXT and all of them up to MAX_LOG_TEXT. A commit over either bound is still indexed
by its message and trailers, but its diff takes no part in patch-id or content matching.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from vimesync.errors import GitTimeout

_COMMIT_LINE = re.compile(rb"^commit ([0-9a-f]{40})$", re.M)
_COMMIT_MARK = re.compile(rb"^commit ([0-9a-f]{40})(?=\n)", re.M)  # complete lines only (streaming)

MAX_COMMIT_TEXT = 8 * 1024 * 1024  # one commit's message and diff held at most (a large commit: ~1 MB)
MAX_LOG_TEXT = 64 * 1024 * 1024  # all commits' diffs held at most, per side
CONTENT_SECONDS = 30.0  # git's own diffing of the downstream history (hostile files: minutes)
# Git diffs a file over this as binary (``Binary files ... differ`` and its blob ids, which
# patch-id still hashes): a 98 MB file of ``a\n`` would otherwise cost git 2 GB of line records.
BIG_FILES = ("-c", f"core.bigFileThreshold={MAX_COMMIT_TEXT}")


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


def bounded(chunks: Iterable[bytes], cap: int = MAX_COMMIT_TEXT) -> bytes | None:
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
