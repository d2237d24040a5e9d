"""The one ``git log --first-parent`` of a walk: its arguments and its streamed parser.

Every first-parent commit with its message and changed paths (merges diffed against their first
parent), NUL-separated; a message is kept to :data:`MAX_MESSAGE` bytes and a subject to
:data:`MAX_SUBJECT` characters, its ``(#N)`` suffix kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from vimesync.upstream.messages import SUFFIX_TAIL, split_suffix
from vimesync.upstream.model import Commit

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


def _tokens(chunks: Iterable[bytes], limit: int = MAX_MESSAGE) -> Iterator[bytes]:
    """NUL-separated tokens of a stream, each cut to ``limit`` bytes: linear in the stream, and a
    50 MB commit message costs one pass over it, never a copy per chunk.

    A token cut inside its first line keeps that line's last ``SUFFIX_TAIL`` bytes after its
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
                tail = (tail + piece[-SUFFIX_TAIL:])[-SUFFIX_TAIL:]

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


def _kept_subject(subject: str) -> str:
    """``subject`` cut to MAX_SUBJECT characters for display, its ``(#N)`` suffix kept: the suffix
    is found on the whole first line (one pass from its end) before the cut, so padding a subject
    cannot turn a PR into a direct commit."""
    if len(subject) <= MAX_SUBJECT:
        return subject
    title, number = split_suffix(subject)
    suffix = "" if number is None else f" (#{number})"
    return title[: MAX_SUBJECT - len(suffix)] + suffix


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
