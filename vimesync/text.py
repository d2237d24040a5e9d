"""Small text helpers shared by the renderers (markdown reports and terminal output)."""

from __future__ import annotations


def plural(n: int, word: str, words: str | None = None) -> str:
    """``2,533 files``: thousands separators and the right number."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"
