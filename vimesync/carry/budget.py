"""The budget of one carry run, over all its files together: bytes translated, translation matches
and wall time.

The translation bounds of :mod:`vimesync.upstream.translate` are per file; a hostile upstream
stays under them with many files (30 files of 1,000,000 matches each compress into a 2 MB pack
and take minutes; 10,000 such paths, half a day). Past a budget the carry stops as bad input
(exit 2) naming the budget and the environment variable that raises it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from vimesync.errors import BadInput
from vimesync.upstream.translate import Transform

BYTES_VAR = "VIMESYNC_CARRY_TRANSLATE_BYTES"
MATCHES_VAR = "VIMESYNC_CARRY_TRANSLATE_MATCHES"
SECONDS_VAR = "VIMESYNC_CARRY_SECONDS"
BYTES = 2 << 30  # bytes of files translated by one run (the Linux kernel's tree is ~1.3 GB)
MATCHES = 2_000_000  # translation matches in one run (~5 µs each in RE2's Python callback: ~11 s)
SECONDS = 1800.0  # wall time of one run's merging


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BadInput(f"{name}={raw[:40]!r}: not a number") from None
    if not value > 0:
        raise BadInput(f"{name}={raw[:40]!r}: must be positive")
    return value


@dataclass
class Budget:
    """What one carry run may still spend (see the module docstring)."""

    max_bytes: int = BYTES
    max_matches: int = MATCHES
    max_seconds: float = SECONDS
    started: float = field(default_factory=time.monotonic)
    used_bytes: int = 0
    used_matches: int = 0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Budget:
        env = os.environ if env is None else env
        return cls(
            max_bytes=int(_number(env, BYTES_VAR, BYTES)),
            max_matches=int(_number(env, MATCHES_VAR, MATCHES)),
            max_seconds=_number(env, SECONDS_VAR, SECONDS),
        )

    def _over(self, what: str, limit: str, var: str) -> BadInput:
        return BadInput(
            f"this carry passed its budget of {limit} {what}",
            hint=f"a larger upstream range is carried with {var} raised, or carry fewer PRs (--pr N)",
        )

    def tick(self) -> None:
        """Stop the carry once it has run for longer than its wall-time budget."""
        if time.monotonic() - self.started > self.max_seconds:
            raise self._over("of merging", f"{self.max_seconds:g} s", SECONDS_VAR)

    def translate(self, transform: Transform, path: str, data: bytes, mode: int) -> tuple[bytes, int]:
        """:meth:`Transform.content`, charged to the budget (bytes read, matches made)."""
        self.tick()
        if not transform.translates(path, data, mode):
            return data, 0
        self.used_bytes += len(data)
        if self.used_bytes > self.max_bytes:
            raise self._over("translated", f"{self.max_bytes:,} bytes", BYTES_VAR)
        left = self.max_matches - self.used_matches

        def over() -> BadInput:
            return self._over("translation matches", f"{self.max_matches:,}", MATCHES_VAR)

        out, hits = transform.content(path, data, mode, max_matches=left, over=over)
        self.used_matches += hits
        return out, hits
