"""The bot's one listing, its PR's GET and its GraphQL mutations against answers GitHub should not
send (a loopback server): a wrong shape is a GitHubError naming the endpoint, a field of the wrong
type is dropped, and an answer that does not say the PR changed is an error (never echoed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.fakegithub import TOKEN, serve
from vimesync.errors import GitHubError
from vimesync.github import GitHubClient, WaitBudget
from vimesync.settings import GitHubSettings


class Canned:
    """Answers every request with ``answer`` (status 200), recording (method, path)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[tuple[str, str]] = []

    def handle(self, path, query, headers, method="GET", payload=None):  # noqa: ANN001, ANN201
        self.seen.append((method, path))
        return 200, {}, self.answer


@pytest.fixture()
def canned(tmp_path: Path) -> Iterator[tuple[Canned, GitHubClient]]:
    fake = Canned(None)
    with serve(fake) as url:
        settings = GitHubSettings(token=TOKEN, api=url, cache=tmp_path / "cache")
        client = GitHubClient("vime-org/vime", settings, wait_budget=WaitBudget(1.0), sleep=lambda s: None)
        try:
            yield fake, client
        finally:
            client.close()


def test_the_listing_tells_issues_from_pulls_and_merged_from_closed(canned) -> None:
    fake, client = canned
    fake.answer = [
        {
            "number": 3,
            "state": "closed",
            "body": "b",
            "pull_request": {"merged_at": None},
            "labels": [{"name": "x"}],
        },
        {"number": 2, "state": "closed", "body": None, "pull_request": {"merged_at": "2026-01-01T00:00:00Z"}},
        {
            "number": 1,
            "state": "open",
            "body": 7,
            "pull_request": "yes",
            "labels": "x",
        },  # wrong types: dropped
    ]
    three, two, one = client.labelled("vimesync-sync")
    assert three.is_pull and not three.open and not three.merged and three.labels == ("x",)
    assert two.is_pull and two.merged and two.body == ""
    assert not one.is_pull and one.open and one.body == "" and one.labels == ()
    assert fake.seen == [("GET", "/repos/vime-org/vime/issues")]


@pytest.mark.parametrize("answer", [{"message": "x"}, ["a", "b"], [{"number": "1"}]])
def test_a_listing_of_the_wrong_shape_is_a_github_error(canned, answer) -> None:
    fake, client = canned
    fake.answer = answer
    with pytest.raises(GitHubError, match="/issues"):
        client.labelled("vimesync-sync")


def test_the_pull_get_is_none_when_closed_and_an_error_when_not_a_pull(canned) -> None:
    fake, client = canned
    pull = {"number": 5, "state": "open", "head": {"ref": "sync/x", "sha": "a" * 40}, "base": {"ref": "main"}}
    fake.answer = {**pull, "node_id": "PR_5", "draft": True}
    got = client.open_pull(5)
    assert got is not None and got.node_id == "PR_5" and got.draft and got.head_sha == "a" * 40
    fake.answer = {**pull, "state": "closed", "number": 6}
    assert client.open_pull(6) is None
    fake.answer = [pull]
    with pytest.raises(GitHubError, match="pulls/7"):
        client.open_pull(7)


@pytest.mark.parametrize(
    "answer",
    [
        {"data": {"markPullRequestReadyForReview": {"pullRequest": {"isDraft": True}}}},  # still a draft
        {"data": None, "errors": [{"type": "NOT_FOUND", "message": "@alice <!-- planted -->"}]},
        ["not", "graphql"],
        None,
    ],
)
def test_a_mutation_that_did_not_happen_is_an_error_that_echoes_nothing(canned, answer) -> None:
    fake, client = canned
    fake.answer = answer
    with pytest.raises(GitHubError) as exc:
        client.set_draft("PR_5", False)
    assert "alice" not in str(exc.value) and "planted" not in str(exc.value)
    assert fake.seen[-1] == ("POST", "/graphql")


def test_on_a_github_server_the_mutation_goes_beside_its_api_root(tmp_path: Path) -> None:
    fake = Canned({"data": {"convertPullRequestToDraft": {"pullRequest": {"isDraft": True}}}})
    with serve(fake) as url:
        settings = GitHubSettings(token=TOKEN, api=f"{url}/api/v3", cache=tmp_path / "cache")
        client = GitHubClient("vime-org/vime", settings, wait_budget=WaitBudget(1.0), sleep=lambda s: None)
        try:
            client.set_draft("PR_5", True)
        finally:
            client.close()
    assert fake.seen == [("POST", "/api/graphql")]
