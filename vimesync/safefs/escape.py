"""Untrusted text shown in an error message."""

from __future__ import annotations


def excerpt(text: str, limit: int = 80) -> str:
    """A short, escaped rendering of untrusted text for an error message: quoted like ``repr``,
    control and invisible characters shown as escapes, cut to about ``limit`` characters."""
    shown = repr(text[:limit])
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in shown)
    return shown + ("…" if len(text) > limit else "")
