"""What the sync bot reads and writes of the fork's repository: one listing per run (the issues
and pull requests carrying the bot's label, open and closed), one pull request's GET for what the
listing lacks (its head, its base, its GraphQL id), and the writes: open a pull request, edit
one's title and description, add labels, open and edit an issue, turn a draft ready for review
(or back). Each write is one request; the bot sends one only when what it would write differs
from what it read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vimesync.errors import GitHubError
from vimesync.github.base import ClientBase
from vimesync.github.shapes import PER_PAGE, field, is_sha, list_of_objects, number, shape_error, text


@dataclass(frozen=True)
class OpenPull:
    """An open pull request as its GET gives it."""

    number: int
    head_ref: str
    head_sha: str
    base_ref: str
    body: str
    title: str
    draft: bool
    html_url: str
    labels: tuple[str, ...] = ()
    node_id: str = ""  # its GraphQL id (the draft/ready mutations name it)


@dataclass(frozen=True)
class LabelledItem:
    """An issue or pull request of the bot's label, as the issues listing gives it (GitHub lists
    pull requests there too, with a ``pull_request`` object holding ``merged_at``)."""

    number: int
    body: str
    title: str
    html_url: str
    is_pull: bool
    open: bool
    merged: bool  # a pull request that was merged
    labels: tuple[str, ...] = ()


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
        node_id=field(item.get("node_id")),
    )


def _item(item: dict[str, Any], url: str) -> LabelledItem:
    pr = item.get("pull_request")
    return LabelledItem(
        number=number(item.get("number"), url),
        body=text(item.get("body")) or "",
        title=field(item.get("title")),
        html_url=field(item.get("html_url")),
        is_pull=isinstance(pr, dict),
        open=item.get("state") == "open",
        merged=isinstance(pr, dict) and isinstance(pr.get("merged_at"), str),
        labels=_labels(item),
    )


class BotWrites(ClientBase):
    """The sync bot's requests; mixed into GitHubClient."""

    def labelled(self, label: str) -> list[LabelledItem]:
        """The run's one listing: the issues and pull requests labelled ``label``, open and closed,
        the most recently updated first (one page of 100: the dashboard is edited whenever a sync
        PR opens or closes, so it stays among them)."""
        url = f"/repos/{self.repo}/issues"
        params = {
            "labels": label,
            "state": "all",
            "sort": "updated",
            "direction": "desc",
            "per_page": PER_PAGE,
        }
        return [_item(item, url) for item in list_of_objects(self.get(url, params), url)]

    def open_pull(self, pull: int) -> OpenPull | None:
        """Pull request ``pull`` if it is open (its head, base and GraphQL id); None otherwise."""
        url = f"/repos/{self.repo}/pulls/{pull}"
        data = self.get(url)
        if not isinstance(data, dict):
            raise shape_error(url, "a pull request")
        return _pull(data, url) if data.get("state") == "open" else None

    def pull_of_branch(self, branch: str) -> OpenPull | None:
        """The open pull request whose head is ``branch`` of this repository (None: none). Asked
        only when the run's listing lacks a PR for a branch the bot may have pushed."""
        url = f"/repos/{self.repo}/pulls"
        owner = self.repo.split("/")[0]
        params = {"head": f"{owner}:{branch}", "state": "open", "per_page": PER_PAGE}
        for item in list_of_objects(self.get(url, params), url):
            pull = _pull(item, url) if item.get("state") == "open" else None
            if pull is not None and pull.head_ref == branch:
                return pull
        return None

    def create_pull(self, *, head: str, base: str, title: str, body: str, draft: bool) -> tuple[int, str]:
        """Open a pull request of ``head`` into ``base``: its number and web address."""
        url = f"/repos/{self.repo}/pulls"
        payload = {"head": head, "base": base, "title": title, "body": body, "draft": draft}
        _, data = self._request("POST", url, {}, {}, payload)
        if not isinstance(data, dict):
            raise shape_error(url, "the pull request made")
        return number(data.get("number"), url), field(data.get("html_url"))

    def set_draft(self, node_id: str, draft: bool) -> None:
        """Turn a pull request (its GraphQL id) into a draft or ready for review: the REST API
        cannot, GitHub's GraphQL mutations ``convertPullRequestToDraft`` and
        ``markPullRequestReadyForReview`` can (the ones PyGithub's ``PullRequest.convert_to_draft``
        and ``mark_ready_for_review`` send; sent here through the one bounded session)."""
        name = "convertPullRequestToDraft" if draft else "markPullRequestReadyForReview"
        kind = name[:1].upper() + name[1:] + "Input!"
        query = (
            f"mutation Mutation($input: {kind}) {{ {name}(input: $input) {{ pullRequest {{ isDraft }} }} }}"
        )
        payload = {"query": query, "variables": {"input": {"pullRequestId": node_id}}}
        _, data = self._request("POST", self.graphql_url, {}, {}, payload)
        done = data.get("data") if isinstance(data, dict) else None
        got = done.get(name) if isinstance(done, dict) else None
        pr = got.get("pullRequest") if isinstance(got, dict) else None
        if not isinstance(pr, dict) or pr.get("isDraft") is not draft:
            raise GitHubError(
                f"GitHub's GraphQL {name} did not make the pull request {'a draft' if draft else 'ready'}"
            )

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
