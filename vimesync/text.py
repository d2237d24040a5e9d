"""Small text helpers shared by the renderers (markdown reports and terminal output)."""

from __future__ import annotations

import re


def plural(n: int, word: str, words: str | None = None) -> str:
    """``2,533 files``: thousands separators and the right number."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


# C0 and C1 controls (tab and, unless asked, newline excepted), DEL, the bidi embeddings,
# overrides and isolates, the line/paragraph separators and the BOM: text that a terminal or a
# renderer would act on (move the cursor, recolour, reorder) instead of showing.
_CONTROL = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)
_CONTROL_KEEP_NL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


_SHORT = {"\n": "\\n", "\r": "\\r"}


def _shown(m: re.Match[str]) -> str:
    c = ord(m[0])
    if m[0] in _SHORT:
        return _SHORT[m[0]]
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (ESC as ``\\x1b``, U+202E as
    ``\\u202e``): nothing a terminal acts on. Newlines are kept only when ``newlines`` is true."""
    return (_CONTROL_KEEP_NL if newlines else _CONTROL).sub(_shown, text)
