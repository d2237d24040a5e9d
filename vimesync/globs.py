"""Gitignore-style path globs (``dir/``, ``**``, ``*.md``, ``!keep``), compiled once.

Paths from git are decoded with ``surrogateescape``, so a file name that is not UTF-8 holds lone
surrogates, which pathspec's RE2 backend cannot encode: every path is matched in the form
:func:`vimesync.text.utf8_safe` gives it (each undecodable byte a U+FFFD), so such a path still
matches ``**`` or ``*.py`` and never raises.

:class:`GlobLists` holds one list per policy rule: matching a path against every list costs one
RE2 set search per list, so it first asks one search over every list's positive globs at once
(sharded: RE2 refuses a set of a few thousand globs), and a path no glob can match (most paths,
most of the time) costs one search per shard instead of one per list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from vimesync.text import utf8_safe

SHARD = 256  # globs per prefilter set (RE2 refuses sets of ~2,000 globs)


class PathGlobs:
    """A compiled list of globs; ValueError with the reason for a list pathspec or RE2 refuses."""

    def __init__(self, globs: Iterable[str]) -> None:
        import pathspec  # ~35 ms (it loads asyncio): paid only by a run that matches paths

        self.globs = tuple(globs)
        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(list(self.globs))
        except Exception as exc:  # pathspec and re2 raise their own error types
            raise ValueError(str(exc) or type(exc).__name__) from None

    def __call__(self, path: str) -> bool:
        """Whether ``path`` (a repository-relative path, possibly surrogate-escaped) matches."""
        return bool(self._spec.match_file(utf8_safe(path)))


class GlobLists:
    """Several glob lists (one per rule), with a prefilter over all their positive globs."""

    def __init__(self, lists: Sequence[PathGlobs]) -> None:
        self.lists = tuple(lists)
        # A list matches a path only through one of its positive (not "!") globs: a path that no
        # positive glob of any list matches is matched by no list. Exact, whatever the negations.
        positive = [g for pg in self.lists for g in pg.globs if not g.startswith("!")]
        try:
            self._shards: tuple[PathGlobs, ...] | None = tuple(
                PathGlobs(positive[i : i + SHARD]) for i in range(0, len(positive), SHARD)
            )
        except ValueError:  # a shard RE2 will not compile: no prefilter, same answers
            self._shards = None

    def may_match(self, path: str) -> bool:
        """False only when no list can match ``path``."""
        return self._shards is None or any(shard(path) for shard in self._shards)

    def candidates(self, paths: Iterable[str]) -> list[str]:
        """The paths some list may match, in order."""
        return [p for p in paths if self.may_match(p)]

    def any(self, path: str) -> bool:
        """Whether some list matches ``path``."""
        return self.may_match(path) and any(pg(path) for pg in self.lists)
