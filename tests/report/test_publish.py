"""Publishing against a real HTTP server on loopback that speaks GitHub's pull-request JSON."""

from __future__ import annotations

import pytest

from tests.report.conftest import HUMAN, TOKEN
from vimesync.errors import BadInput, GitHubError
from vimesync.report.publish import END, START, parse_target, publish, splice


def test_publish_keeps_human_text_and_is_idempotent(github) -> None:
    state, api = github
    first = publish("vime/vime#7", "## Summary\n\nv1\n", token=TOKEN, api_url=api)
    assert first.changed and first.url == "https://github.com/vime/vime/pull/7"
    patches = [r for r in state.requests if r[0] == "PATCH"]
    assert len(patches) == 1
    body = patches[0][2]["body"]
    assert body.startswith(HUMAN.rstrip())  # human text untouched (CRLF kept)
    assert f"{START}\r\n## Summary\r\n\r\nv1\r\n{END}" in body
    assert all(a and TOKEN in a for a in state.auth)  # the token is sent, as a header only

    second = publish("vime/vime#7", "## Summary\n\nv1\n", token=TOKEN, api_url=api)
    assert not second.changed
    assert len([r for r in state.requests if r[0] == "PATCH"]) == 1  # no-op: no second PATCH

    state.body = state.body.replace("- keep this", "- keep this, edited later")
    third = publish("vime/vime#7", "## Summary\n\nv2\n", token=TOKEN, api_url=api)
    assert third.changed
    assert "- keep this, edited later" in state.body
    assert "v2" in state.body and "v1" not in state.body
    assert state.body.count(START) == 1 and state.body.count(END) == 1


def test_publish_into_empty_description(github) -> None:
    state, api = github
    state.body = None
    publish("vime/vime#7", "report\n", token=TOKEN, api_url=api)
    assert state.body == f"{START}\nreport\n{END}\n"


def test_refusal_never_shows_the_token(github) -> None:
    state, api = github
    state.status = 401
    with pytest.raises(GitHubError) as err:
        publish("vime/vime#7", "r\n", token=TOKEN, api_url=api)
    assert "401" in str(err.value) and TOKEN not in str(err.value) and TOKEN not in (err.value.hint or "")


def test_unreachable_github_is_a_clean_error() -> None:
    with pytest.raises(GitHubError, match="cannot reach"):
        publish("vime/vime#7", "r\n", token=TOKEN, api_url="http://127.0.0.1:9")


def test_missing_token_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadInput, match="token"):
        publish("vime/vime#7", "r\n", api_url="http://127.0.0.1:9")


@pytest.mark.parametrize(
    "target", ["vime/vime", "vime#7", "vime/vime#0", "https://github.com/vime/vime/pull/7"]
)
def test_bad_targets(target: str) -> None:
    with pytest.raises(BadInput):
        parse_target(target)


def test_splice_replaces_only_between_markers() -> None:
    body = f"top\n\n{START}\nold\n{END}\n\nbottom\n"
    assert splice(body, "new\n") == f"top\n\n{START}\nnew\n{END}\n\nbottom\n"
    assert splice(splice(body, "new\n"), "new\n") == splice(body, "new\n")


@pytest.mark.parametrize("body", [f"{START}\nx", f"x\n{END}", f"{END}\n{START}", f"{START}{START}{END}"])
def test_splice_refuses_unbalanced_markers(body: str) -> None:
    with pytest.raises(BadInput, match="markers"):
        splice(body, "r")
