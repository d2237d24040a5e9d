"""Repository names as GitHub allows them: the one check for a repository named by config, a flag
or a link."""

from __future__ import annotations

import re

# owner/name
REPO_PATTERN = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}"


def is_repo_name(text: str) -> bool:
    return re.fullmatch(REPO_PATTERN, text) is not None
