"""The path map: where upstream paths live in the downstream (``[upstream] map = ["slime/=vime/"]``).

A map is a sequence of (upstream SRC, downstream DST) pairs. Each side of a pair names one path,
a folder or a file, and holds that path and everything below it: ``slime/`` and ``slime`` both
hold ``slime`` and ``slime/x``, never ``slimeextra/x`` (a pair's trailing slash changes nothing,
so ``a.py=b.py`` maps one file). The first pair that holds a path maps it: :meth:`PathMap.forward`
by SRC (upstream -> downstream, the carry and the walk's mirrored detection), :meth:`PathMap.reverse`
by DST (downstream -> upstream counterpart, the audit). A path no pair holds keeps its name in
both directions: outside the map, upstream and downstream paths are the same.

When no SRC lies inside another SRC and no DST inside another DST, the two are inverses:
``reverse(forward(p)) == p`` for every path a SRC holds, ``forward(reverse(q)) == q`` for every
path a DST holds. (With nested sides the first pair still wins, so a later, narrower pair is
shadowed in that direction.)

Paths are ``str`` (surrogate-escaped where git's bytes are not UTF-8, as the carry reads them) or
``bytes`` (diff headers); each gets the map in its own type. The map only rewrites names: whether
a mapped path is safe to write is its caller's check (``upstream.translate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

from vimesync.errors import ConfigError
from vimesync.safefs import excerpt

P = TypeVar("P", str, bytes)
Rules = tuple[tuple[P, P, P], ...]  # (stem, stem + "/", the other side's stem)


def check_pair(src: str, dst: str, *, where: str) -> None:
    """ConfigError for an empty SRC or DST: an empty prefix matches every path, so ``=vime/``
    would claim the whole upstream tree for ``vime/`` (and ``slime/=`` the reverse)."""
    if not src.strip("/") or not dst.strip("/"):
        raise ConfigError(
            where,
            f"path map {excerpt(src + '=' + dst)}: SRC and DST must both name a path",
            hint="an empty prefix matches every path; give the folders, e.g. slime/=vime/",
        )


def _rules(pairs: Sequence[tuple[P, P]], slash: P) -> tuple[Rules[P], Rules[P]]:
    fwd = []
    rev = []
    for src, dst in pairs:
        s, d = src.rstrip(slash), dst.rstrip(slash)
        fwd.append((s, s + slash, d))
        rev.append((d, d + slash, s))
    return tuple(fwd), tuple(rev)


def _apply(rules: Rules[P], path: P) -> P:
    for stem, folder, other in rules:
        if path == stem:
            return other
        if path.startswith(folder):
            return other + path[len(stem) :]
    return path


def _encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class PathMap:
    """(upstream SRC, downstream DST) pairs, as ``config.parse_map`` gives them."""

    pairs: tuple[tuple[str, str], ...] = ()
    _str: tuple[Rules[str], Rules[str]] = field(init=False, repr=False, compare=False)
    _bytes: tuple[Rules[bytes], Rules[bytes]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pairs = tuple((str(s), str(d)) for s, d in self.pairs)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "_str", _rules(pairs, "/"))
        object.__setattr__(self, "_bytes", _rules([(_encode(s), _encode(d)) for s, d in pairs], b"/"))

    @classmethod
    def of(cls, pairs: Sequence[tuple[str, str]], *, where: str = "--map") -> PathMap:
        """The map of ``pairs``; ConfigError naming ``where`` for a pair with an empty side."""
        for src, dst in pairs:
            check_pair(src, dst, where=where)
        return cls(tuple(pairs))

    @overload
    def forward(self, path: str) -> str: ...
    @overload
    def forward(self, path: bytes) -> bytes: ...
    def forward(self, path: str | bytes) -> str | bytes:
        """The downstream name of upstream ``path`` (the first pair whose SRC holds it)."""
        if isinstance(path, bytes):
            return _apply(self._bytes[0], path)
        return _apply(self._str[0], path)

    @overload
    def reverse(self, path: str) -> str: ...
    @overload
    def reverse(self, path: bytes) -> bytes: ...
    def reverse(self, path: str | bytes) -> str | bytes:
        """The upstream counterpart of downstream ``path`` (the first pair whose DST holds it)."""
        if isinstance(path, bytes):
            return _apply(self._bytes[1], path)
        return _apply(self._str[1], path)
