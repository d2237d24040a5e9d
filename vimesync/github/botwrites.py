"""What the sync bot reads and writes of the fork's repository: its open pull requests (one
listing), its dashboard issue (one listing, by label), and the writes: open a pull request, edit
one's title and description, add labels, open and edit an issue. Each write is one request; the
bot sends one only when what it would write differs from what it read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vimesync.github.base import ClientBase
from vimesync.github.shapes import PER_PAGE, field, is_sha, list_of_objects, number, shape_error, text


@dataclass(frozen=True)
class OpenPull:
    """An open pull request as the listing gives it."""

    number: int
    head_ref: str
    head_sha: str
    base_ref: str
    body: str
    title: str
    draft: bool
    html_url: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpenIssue:
    number: int
    body: str
    title: str
    html_url: str


def _labels(item: dict[str, Any]) -> tuple[str, ...]:
    raw = item.get("labels")
    if not isinstance(raw, list):
        return ()
    return tuple(field(label.get("name")) for label in raw if isinstance(label, dict))


def _pull(item: dict[str, Any], url: str) -> OpenPull | None:
    head, base = item.get("head"), item.get("base")
    if not isinstance(head, dict) or not isinstance(base, dict):
        raise shape_error(url, "pull requests with a head and a base")
    sha = text(head.get("sha")) or ""
    if not is_sha(sha):
        return None
    return OpenPull(
        number=number(item.get("number"), url),
        head_ref=field(head.get("ref")),
        head_sha=sha,
        base_ref=field(base.get("ref")),
        body=text(item.get("body")) or "",
        title=field(item.get("title")),
        draft=item.get("draft") is True,
        html_url=field(item.get("html_url")),
        labels=_labels(item),
    )


class BotWrites(ClientBase):
    """The sync bot's requests; mixed into GitHubClient."""

    def open_pulls(self) -> list[OpenPull]:
        """The open pull requests (one page of the newest 100: the bot's is found among them)."""
        url = f"/repos/{self.repo}/pulls"
        items = list_of_objects(self.get(url, {"state": "open", "per_page": PER_PAGE}), url)
        return [p for item in items if (p := _pull(item, url)) is not None]

    def labelled_issues(self, label: str) -> list[OpenIssue]:
        """The open issues (not pull requests) labelled ``label``, newest first (one page)."""
        url = f"/repos/{self.repo}/issues"
        params = {"state": "open", "labels": label, "per_page": PER_PAGE}
        found = []
        for item in list_of_objects(self.get(url, params), url):
            if "pull_request" in item:
                continue
            found.append(
                OpenIssue(
                    number=number(item.get("number"), url),
                    body=text(item.get("body")) or "",
                    title=field(item.get("title")),
                    html_url=field(item.get("html_url")),
                )
            )
        return found

    def create_pull(self, *, head: str, base: str, title: str, body: str, draft: bool) -> tuple[int, str]:
        """Open a pull request of ``head`` into ``base``: its number and web address."""
        url = f"/repos/{self.repo}/pulls"
        payload = {"head": head, "base": base, "title": title, "body": body, "draft": draft}
        _, data = self._request("POST", url, {}, {}, payload)
        if not isinstance(data, dict):
            raise shape_error(url, "the pull request made")
        return number(data.get("number"), url), field(data.get("html_url"))

    def add_labels(self, issue: int, labels: list[str]) -> None:
        """Add ``labels`` to issue or pull request ``issue`` (the labels it has stay)."""
        self._request("POST", f"/repos/{self.repo}/issues/{issue}/labels", {}, {}, {"labels": labels})

    def create_issue(self, *, title: str, body: str, labels: list[str]) -> tuple[int, str]:
        url = f"/repos/{self.repo}/issues"
        _, data = self._request("POST", url, {}, {}, {"title": title, "body": body, "labels": labels})
        if not isinstance(data, dict):
            raise shape_error(url, "the issue made")
        return number(data.get("number"), url), field(data.get("html_url"))

    def set_issue_body(self, issue: int, body: str) -> None:
        """Replace the description of issue ``issue``: a whole-field PATCH, safe to retry."""
        self._request("PATCH", f"/repos/{self.repo}/issues/{issue}", {}, {}, {"body": body})
