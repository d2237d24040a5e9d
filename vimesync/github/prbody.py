"""One pull request's description: read it (revalidated, so never stale) and replace it."""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.github.base import ClientBase
from vimesync.github.shapes import shape_error


@dataclass(frozen=True)
class PullInfo:
    """What vimesync reads of one pull request."""

    body: str  # "" when the description is empty
    html_url: str
    title: str = ""


class PullBody(ClientBase):
    """Reading and editing a PR description; mixed into GitHubClient."""

    def pull_request(self, number: int) -> PullInfo:
        """The description and web address of PR ``number`` (revalidated, so never stale)."""
        url = f"/repos/{self.repo}/pulls/{number}"
        item = self.get(url)
        if not isinstance(item, dict):
            raise shape_error(url, "an object")
        body, html_url = item.get("body") or "", item.get("html_url") or ""
        title = item.get("title") or ""
        if not isinstance(body, str) or not isinstance(html_url, str) or not isinstance(title, str):
            raise shape_error(url, "a pull request with a text body")
        return PullInfo(body=body, html_url=html_url, title=title)

    def set_pull_body(self, number: int, body: str, *, title: str | None = None) -> None:
        """Replace the description of PR ``number`` (and its title, when given): a whole-field
        PATCH, safe to retry."""
        fields = {"body": body} if title is None else {"title": title, "body": body}
        self._request("PATCH", f"/repos/{self.repo}/pulls/{number}", {}, {}, fields)
