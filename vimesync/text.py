"""Small text helpers shared by the renderers (markdown reports and terminal output)."""

from __future__ import annotations

import re
from functools import cache


def plural(n: int, word: str, words: str | None = None) -> str:
    """``2,533 files``: thousands separators and the right number."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def agree(n: int, one: str, many: str) -> str:
    """The verb (or any word) that agrees with a count: ``agree(1, "needs", "need")``. Beside
    :func:`plural`: ``f"{plural(n, 'gate')} {agree(n, 'is', 'are')} not met"``."""
    return one if n == 1 else many


def of_total(n: int, total: int, word: str, words: str | None = None) -> str:
    """``1 of 4 patches``, ``1 of 1 patch``: the noun agrees with the total (the verb after it,
    with ``n``: use :func:`agree`)."""
    return f"{n:,} of {plural(total, word, words)}"


# C0 and C1 controls (tab and, unless asked, newline excepted), DEL, the bidi embeddings,
# overrides and isolates, the line/paragraph separators and the BOM: text that a terminal or a
# renderer would act on (move the cursor, recolour, reorder) instead of showing. Also lone
# surrogates (a path's undecodable bytes kept by surrogateescape, a ``\ud800`` JSON escape):
# no UTF-8 writer can encode them, so they are shown as ``\udcff`` too.
_CONTROL_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
)


@cache
def _control(newlines: bool) -> re.Pattern[str]:
    """The control-character pattern (newline kept or not), compiled on first use: these wide
    classes cost about a millisecond to compile, which ``vimesync --help`` need not pay."""
    return re.compile(f"[{'' if newlines else chr(10)}{_CONTROL_CLASS}]")


@cache
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


_SHORT = {"\n": "\\n", "\r": "\\r"}


def _shown(m: re.Match[str]) -> str:
    c = ord(m[0])
    if m[0] in _SHORT:
        return _SHORT[m[0]]
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (ESC as ``\\x1b``, U+202E as
    ``\\u202e``): nothing a terminal acts on. Newlines are kept only when ``newlines`` is true."""
    return _control(newlines).sub(_shown, text)


# What the GitHub Actions runner reads as a workflow command on any line of a step's stdout or
# stderr (actions/runner ActionCommand.cs): "##[" anywhere in the line (the legacy syntax), and
# "::" at the start of the line after white space (.NET's TrimStart: U+3000, U+00A0 too).
_LEGACY_COMMAND = "##["
_LINE_COMMAND = re.compile(r"^(\s*):(?=:)", re.MULTILINE)


def inert(text: str) -> str:
    """``text`` that the GitHub Actions runner cannot read as a workflow command on any of its
    lines: ``##[`` shown as ``#\\x23[`` and a line's leading ``::`` as ``\\x3a:``. Terminal output
    passes through it (our own annotations are printed apart, escaped as GitHub's toolkit does)."""
    if "##[" in text:
        text = text.replace(_LEGACY_COMMAND, "#\\x23[")
    if "::" in text:
        text = _LINE_COMMAND.sub(lambda m: m[1] + "\\x3a", text)
    return text


def utf8_safe(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD: what a UTF-8-only matcher (RE2,
    pathspec's RE2 backend) can take. One replacement character per undecodable byte of a
    surrogate-escaped path, so such a path still matches ``**`` or ``*.py``."""
    if text.isascii():
        return text
    return _surrogate().sub("\ufffd", text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with "…" when cut (never
    mid-word: "No such file or )" read as a broken message)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def file_lines(text: str) -> list[str]:
    """The lines of a file we number (a series, a policy, a config), split where git, editors and
    ``grep -n`` split them: at LF only, a CR before it dropped. ``str.splitlines`` also splits at
    form feeds, vertical tabs, U+0085, U+2028/9 and more, and one file numbered two ways had
    ``pin bump`` comment out the wrong line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def file_lines_bytes(data: bytes) -> list[bytes]:
    """:func:`file_lines` of bytes, each line keeping its ending (to rewrite a file line by line)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def untouched_note(untouched: bool, parses_with: str | None) -> str:
    """The label of a parse failure in a file the patch stack did not change, e.g.
    " (untouched by the stack: fails at the pin itself; try --python 3.12)"; "" otherwise."""
    if not untouched:
        return ""
    hint = f"; the {parses_with} grammar parses it: try --python {parses_with}" if parses_with else ""
    return f" (untouched by the stack: fails at the pin itself{hint})"
