"""What the environment says about GitHub: the token, the API root, the bounds in seconds, and
where answers are cached."""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.config import cache_root
from vimesync.errors import GitHubError

API_URL = "https://api.github.com"
DEADLINE = 60.0  # seconds for one call, whatever the server does
WAIT_BUDGET = 60.0  # seconds of rate-limit waits in one process


def token_from_env() -> str | None:
    """The GitHub token: ``GITHUB_TOKEN``, else ``GH_TOKEN`` (the gh CLI's), else None."""
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None


def api_url() -> str:
    """The API root: ``VIMESYNC_GITHUB_API``, else ``GITHUB_API_URL``, else https://api.github.com.

    ``VIMESYNC_GITHUB_API`` points at GitHub Enterprise (https://host/api/v3) or, in tests, a
    loopback server; ``GITHUB_API_URL`` is what GitHub Actions sets on every runner.
    """
    url = os.environ.get("VIMESYNC_GITHUB_API") or os.environ.get("GITHUB_API_URL") or API_URL
    return url.rstrip("/")


def seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable ``name``, else ``default``."""
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        raise GitHubError(f"{name} must be a number of seconds") from None
    if not value > 0:
        raise GitHubError(f"{name} must be a positive number of seconds")
    return value


def cache_dir() -> Path:
    """Where HTTP responses are cached: ``github/`` in vimesync's cache folder."""
    return cache_root() / "github"
