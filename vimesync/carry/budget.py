"""The budget of one carry run, over all its files together: bytes translated, translation matches
and wall time.

The translation bounds of :mod:`vimesync.upstream.translate` are per file; a hostile upstream
stays under them with many files (30 files of 1,000,000 matches each compress into a 2 MB pack
and take minutes; 10,000 such paths, half a day). Past a budget the carry stops as bad input
(exit 2) naming the budget and the environment variable that raises it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from vimesync.errors import BadInput
from vimesync.settings import CARRY_BYTES_ENV, CARRY_MATCHES_ENV, CARRY_SECONDS_ENV, Settings
from vimesync.upstream.translate import Transform

BYTES = 2 << 30  # bytes of files translated by one run (the Linux kernel's tree is ~1.3 GB)
MATCHES = 2_000_000  # translation matches in one run (~5 µs each in RE2's Python callback: ~11 s)
SECONDS = 1800.0  # wall time of one run's merging


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
    def from_settings(cls, settings: Settings) -> Budget:
        """The bounds as the job sets them (each variable raises or lowers its default)."""
        bounds = settings.carry_budget(max_bytes=BYTES, max_matches=MATCHES, max_seconds=SECONDS)
        return cls(max_bytes=bounds.max_bytes, max_matches=bounds.max_matches, max_seconds=bounds.max_seconds)

    def _over(self, what: str, limit: str, var: str) -> BadInput:
        return BadInput(
            f"this carry passed its budget of {limit} {what}",
            hint=f"a larger upstream range is carried with {var} raised, or carry fewer PRs (--pr N)",
        )

    def tick(self) -> None:
        """Stop the carry once it has run for longer than its wall-time budget."""
        if time.monotonic() - self.started > self.max_seconds:
            raise self._over("of merging", f"{self.max_seconds:g} s", CARRY_SECONDS_ENV)

    def translate(self, transform: Transform, path: str, data: bytes, mode: int) -> tuple[bytes, int]:
        """:meth:`Transform.content`, charged to the budget (bytes read, matches made)."""
        self.tick()
        if not transform.translates(path, data, mode):
            return data, 0
        self.used_bytes += len(data)
        if self.used_bytes > self.max_bytes:
            raise self._over("translated", f"{self.max_bytes:,} bytes", CARRY_BYTES_ENV)
        left = self.max_matches - self.used_matches

        def over() -> BadInput:
            return self._over("translation matches", f"{self.max_matches:,}", CARRY_MATCHES_ENV)

        out, hits = transform.content(path, data, mode, max_matches=left, over=over)
        self.used_matches += hits
        return out, hits
