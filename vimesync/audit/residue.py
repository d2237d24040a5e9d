"""What an overlay adds to a translation: the residue, and the upstream comments it drops.

A path with an upstream counterpart is compared with that counterpart *translated* (path map and
``[[upstream.translate]]`` rules, as carry applies them). Equal: the translation explains the whole
difference. Not equal: the path is an overlay, and its residue — the unified diff from the
translated upstream to the downstream file — is what a reviewer reads.

The residue's :attr:`Residue.key` hashes the changed lines only (no line numbers, no context), so
a review bound to it stays valid while upstream moves the code around the overlay, and goes
stale as soon as the overlay itself (or the upstream lines it replaces) changes.

Pure: bytes in, a :class:`Residue` out. Inputs are bounded (``MAX_RESIDUE_INPUT`` bytes a side;
binary files have no line diff) so that a hostile file cannot make the diff quadratic in time.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import tokenize
from dataclasses import dataclass

MAX_RESIDUE_INPUT = 1 << 20  # bytes per side; larger files are overlays without a line diff
MAX_RESIDUE_SHOWN = 400  # lines of the unified diff kept for the reader (the key covers all)
MAX_DROPPED = 50  # dropped comment lines listed per file
_BINARY_PROBE = 8000


@dataclass(frozen=True)
class Residue:
    key: str  # sha256 of the changed lines, in order, hunk by hunk (no line numbers, no context)
    added: int  # lines the downstream adds to the translated upstream
    removed: int  # lines of the translated upstream the downstream drops
    diff: str  # the unified diff, at most MAX_RESIDUE_SHOWN lines ("" when not a text diff)
    dropped_comments: tuple[str, ...] = ()  # "LINE: text" of upstream comments/docstrings lost


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)


def _text(data: bytes) -> bool:
    return len(data) <= MAX_RESIDUE_INPUT and b"\0" not in data[:_BINARY_PROBE]


def residue(path: str, translated: bytes, head: bytes) -> Residue:
    """The residue of ``head`` (the downstream file) over ``translated`` (its translated upstream
    counterpart). For binary or oversized files, the key is the pair of contents' hash and the
    counts are zero: any change to either side makes a review of it stale."""
    if not (_text(translated) and _text(head)):
        digest = hashlib.sha256(
            b"binary\0" + hashlib.sha256(translated).digest() + hashlib.sha256(head).digest()
        )
        return Residue(key=digest.hexdigest(), added=0, removed=0, diff="")
    up, down = _lines(translated), _lines(head)
    matcher = difflib.SequenceMatcher(None, up, down, autojunk=False)
    ops = matcher.get_opcodes()
    h = hashlib.sha256()
    added = removed = 0
    lost: list[tuple[int, int]] = []  # upstream line ranges the downstream deletes or replaces
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        h.update(b"@@\n")
        for line in up[i1:i2]:
            h.update(b"-" + _norm(line))
        for line in down[j1:j2]:
            h.update(b"+" + _norm(line))
        removed += i2 - i1
        added += j2 - j1
        if i2 > i1:
            lost.append((i1, i2))
    diff = list(difflib.unified_diff(up, down, f"a/{path} (translated upstream)", f"b/{path}", n=3))
    shown = "".join(_terminated(line) for line in diff[:MAX_RESIDUE_SHOWN])
    if len(diff) > MAX_RESIDUE_SHOWN:
        shown += f"... {len(diff) - MAX_RESIDUE_SHOWN:,} more diff lines\n"
    dropped = dropped_comments(up, down, lost) if path.endswith((".py", ".pyi")) else ()
    return Residue(key=h.hexdigest(), added=added, removed=removed, diff=shown, dropped_comments=dropped)


def _norm(line: str) -> bytes:
    return line.rstrip("\r\n").encode("utf-8", "surrogateescape") + b"\n"


def _terminated(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def _comment_lines(source: str) -> dict[int, str]:
    """1-based line -> comment text (``# ...``) of Python ``source``; a file tokenize cannot read
    gives the comments found before the error."""
    found: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                found[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


def _docstring_lines(source: str) -> set[int]:
    """1-based lines of the module's, classes' and functions' docstrings (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    end = body[0].end_lineno or body[0].lineno
                    lines.update(range(body[0].lineno, end + 1))
    return lines


def dropped_comments(up: list[str], down: list[str], lost: list[tuple[int, int]]) -> tuple[str, ...]:
    """The translated upstream's comment and docstring lines inside ``lost`` (0-based line ranges
    the downstream deletes or replaces) whose text the downstream holds nowhere: "LINE: text"."""
    if not lost:
        return ()
    source = "".join(up)
    comments = _comment_lines(source)
    docstrings = _docstring_lines(source)
    kept = "".join(down)
    kept_lines = {line.strip() for line in down}
    out: list[str] = []
    for i1, i2 in lost:
        for i in range(i1, i2):
            number = i + 1
            text = up[i].strip()
            if number in comments:
                comment = comments[number]
                if comment.strip() != "#" and comment not in kept:
                    out.append(f"{number}: {text}")
            elif number in docstrings and text and text.strip("\"'") and text not in kept_lines:
                out.append(f"{number}: {text}")
            if len(out) >= MAX_DROPPED:
                return tuple(out)
    return tuple(out)
