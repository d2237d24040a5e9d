"""Where one pull request stands: open, merged (with its merge commit) or closed unmerged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vimesync.github.base import ClientBase
from vimesync.github.shapes import field, is_sha, shape_error

State = Literal["open", "merged", "closed"]


@dataclass(frozen=True)
class PullState:
    number: int
    state: State
    merge_commit: str | None = None  # the commit that landed it, when merged
    title: str = ""


class PullStates(ClientBase):
    """One PR's state; mixed into GitHubClient."""

    def pull_state(self, number: int) -> PullState:
        """Open, merged (and by which commit) or closed unmerged: PR ``number``."""
        url = f"/repos/{self.repo}/pulls/{number}"
        item = self.get(url)
        if not isinstance(item, dict) or item.get("state") not in ("open", "closed"):
            raise shape_error(url, "a pull request with a state")
        merged = item.get("merged") is True or bool(item.get("merged_at"))
        sha = item.get("merge_commit_sha")
        state: State = "open" if item["state"] == "open" else "merged" if merged else "closed"
        commit = sha.lower() if merged and isinstance(sha, str) and is_sha(sha) else None
        return PullState(number, state, commit, field(item.get("title")))
