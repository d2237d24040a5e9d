"""``vimesync patches lint``: what a reviewer of a patch stack would flag, without a source (the
series against its folder, each patch's DEP-3 header, line endings and whitespace, ``index``
lines) and, with ``--strict`` and a source, hunks that apply only at an offset.

Codes are documented in docs/lint.md; findings print like ruff's (``path:line: CODE message``).
"""

from vimesync.lint.model import CODES, Finding, LintResult
from vimesync.lint.run import lint_series

__all__ = ["CODES", "Finding", "LintResult", "lint_series"]
