"""Gitignore-style path globs (``dir/``, ``**``, ``*.md``, ``!keep``), compiled once.

Paths from git are decoded with ``surrogateescape``, so a file name that is not UTF-8 holds lone
surrogates, which pathspec's RE2 backend cannot encode: every path is matched in the form
:func:`vimesync.text.utf8_safe` gives it (each undecodable byte a U+FFFD), so such a path still
matches ``**`` or ``*.py`` and never raises.
"""

from __future__ import annotations

from collections.abc import Iterable

import pathspec

from vimesync.text import utf8_safe


class PathGlobs:
    """A compiled list of globs; ValueError (or pathspec's own error) for a bad glob."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(globs)
        self._spec = pathspec.GitIgnoreSpec.from_lines(list(self.globs))

    def __call__(self, path: str) -> bool:
        """Whether ``path`` (a repository-relative path, possibly surrogate-escaped) matches."""
        return bool(self._spec.match_file(utf8_safe(path)))
