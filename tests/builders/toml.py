"""``tomllib`` for the tests (``tomli`` on Python 3.10): they read back the TOML vimesync writes."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib as tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["tomllib"]
