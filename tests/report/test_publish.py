"""Publishing against a real HTTP server on loopback that speaks GitHub's pull-request JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import fakegithub
from tests.builders.pullbody import HUMAN, TOKEN
from vimesync.errors import BadInput, GitHubError
from vimesync.github import GitHubClient
from vimesync.report.publish import END, START, parse_target, publish, splice
from vimesync.settings import GitHubSettings, Settings

# PyGithub deprecations (get_repo(lazy=...), login/password auth) must not come back.
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def _client(api: str, tmp_path: Path, repo: str = "vime/vime") -> GitHubClient:
    settings = GitHubSettings(token=TOKEN, api=api, cache=tmp_path / "cache")
    return GitHubClient(repo, settings, sleep=lambda _: None)


def test_publish_keeps_human_text_and_is_idempotent(github, tmp_path: Path) -> None:
    state, api = github
    client = _client(api, tmp_path)
    first = publish("vime/vime#7", "## Summary\n\nv1\n", client)
    assert first.changed and first.url == "https://github.com/vime/vime/pull/7"
    patches = [r for r in state.requests if r[0] == "PATCH"]
    assert len(patches) == 1
    body = patches[0][2]["body"]
    assert body.startswith(HUMAN.rstrip())  # human text untouched (CRLF kept)
    assert f"{START}\r\n## Summary\r\n\r\nv1\r\n{END}" in body
    assert all(a and TOKEN in a for a in state.auth)  # the token is sent, as a header only

    second = publish("vime/vime#7", "## Summary\n\nv1\n", client)
    assert not second.changed
    assert len([r for r in state.requests if r[0] == "PATCH"]) == 1  # no-op: no second PATCH

    state.body = state.body.replace("- keep this", "- keep this, edited later")
    third = publish("vime/vime#7", "## Summary\n\nv2\n", client)
    assert third.changed
    assert "- keep this, edited later" in state.body
    assert "v2" in state.body and "v1" not in state.body
    assert state.body.count(START) == 1 and state.body.count(END) == 1


def test_publish_into_empty_description(github, tmp_path: Path) -> None:
    state, api = github
    state.body = None
    publish("vime/vime#7", "report\n", _client(api, tmp_path))
    assert state.body == f"{START}\nreport\n{END}\n"


def test_publish_takes_token_and_api_root_from_the_settings(github, tmp_path: Path) -> None:
    state, api = github
    # what GitHub Actions sets, and what the gh CLI uses
    env = {"GITHUB_API_URL": api, "GH_TOKEN": TOKEN, "VIMESYNC_CACHE_DIR": str(tmp_path)}
    assert publish("vime/vime#7", "r\n", Settings.of(env).github).changed
    assert state.auth and all(a == f"token {TOKEN}" for a in state.auth)


def test_publish_sees_edits_made_since_the_last_read(tmp_path: Path) -> None:
    # The shared stand-in sends ETags: the cached description is revalidated, never reused stale.
    fake = fakegithub.FakeGitHub(range(1, 2))
    fake.bodies[7] = "Human text."
    with fakegithub.serve(fake) as api:
        publish("vime/vime#7", "v1\n", _client(api, tmp_path))
        fake.bodies[7] = fake.bodies[7].replace("Human text.", "Human text, edited on GitHub.")
        again = publish("vime/vime#7", "v1\n", _client(api, tmp_path))
        assert not again.changed
        publish("vime/vime#7", "v2\n", _client(api, tmp_path))
    assert fake.bodies[7] == f"Human text, edited on GitHub.\n\n{START}\nv2\n{END}\n"
    assert len(fake.patches) == 2


def test_refusal_never_shows_the_token(github, tmp_path: Path) -> None:
    state, api = github
    state.status = 401
    with pytest.raises(GitHubError) as err:
        publish("vime/vime#7", "r\n", _client(api, tmp_path))
    assert "401" in str(err.value) and TOKEN not in str(err.value) and TOKEN not in (err.value.hint or "")


def test_unreachable_github_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(GitHubError, match="cannot reach"):
        publish("vime/vime#7", "r\n", _client("http://127.0.0.1:9", tmp_path))


def test_missing_token_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="token"):
        publish("vime/vime#7", "r\n", GitHubSettings(api="http://127.0.0.1:9", cache=tmp_path))


def test_client_for_another_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="other/repo"):
        publish("vime/vime#7", "r\n", _client("http://127.0.0.1:9", tmp_path, repo="other/repo"))


@pytest.mark.parametrize(
    "target",
    [
        "vime/vime",
        "vime#7",
        "vime/vime#0",
        "https://github.com/vime/vime/pull/7",
        "vime/vime#1234567890",  # PR numbers have at most 9 digits, as everywhere else
        "vime/vime#" + "9" * 290,
        "vime/vime#7\x1b[2J",
        "vime/vime#7#8",
    ],
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


def test_splice_neutralizes_the_report_only() -> None:
    body = "Thanks @reviewer!\n"
    new = splice(body, "- #12 by @alice (see `@bob`)\n")
    assert new.startswith("Thanks @reviewer!\n")  # the human's own mention is theirs to keep
    assert f"{START}\n- #12 by <code>@alice</code> (see `@bob`)\n{END}" in new
    assert splice(new, "- #12 by @alice (see `@bob`)\n") == new


def test_a_file_named_like_a_marker_cannot_break_later_publishes() -> None:
    from dataclasses import replace

    from tests.builders import samples
    from vimesync.audit.model import PathAudit
    from vimesync.report import ReportParts, build_report, render_markdown

    audit = samples.audit(ok=False)
    hostile = replace(audit.paths[0], path=f"x/{END}", review="unreviewed")
    assert isinstance(hostile, PathAudit)
    report = render_markdown(
        build_report(ReportParts(audit=replace(audit, paths=(hostile, *audit.paths[1:]))))
    )
    assert END not in report and "x/<!-\\- vimesync:report:end -->" in report
    body = splice("Written by a human.\n", report)
    assert body.count(START) == 1 and body.count(END) == 1
    again = splice(body, report + "\nmore\n")  # the next --publish still finds one pair
    assert again.startswith("Written by a human.\n\n") and again.count(END) == 1 and "more" in again


def test_a_broken_marker_pair_is_refused_with_the_counts() -> None:
    body = f"human\n{START}\nreport\n{END}\nplanted {END}\nmore human text\n"
    with pytest.raises(BadInput, match="1 start and 2 end vimesync report markers") as exc:
        splice(body, "new\n")
    assert exc.value.hint and "one" in exc.value.hint


def test_the_renderer_neutralizes_mentions_for_output_too() -> None:
    from dataclasses import replace

    from tests.builders import samples
    from vimesync.report import ReportParts, build_report, render_markdown

    walk = samples.walk()
    walk = replace(walk, prs=(replace(walk.prs[0], title="thanks @octocat and @org/team"), *walk.prs[1:]))
    md = render_markdown(
        build_report(ReportParts(walk=walk, upstream_name="Slime", upstream_repo="THUDM/slime"))
    )
    assert "thanks <code>@octocat</code> and <code>@org/team</code>" in md


def test_a_description_over_githubs_limit_is_never_sent(github, tmp_path: Path) -> None:
    """GitHub answers 422 to a body over 65,536 characters: refused before the PATCH (and, when
    the report alone is too long, before any request), naming the length and the limit."""
    state, api = github
    client = _client(api, tmp_path)
    with pytest.raises(BadInput, match=r"over GitHub's limit of 65,536") as exc:
        publish("vime/vime#7", "x" * 70_000 + "\n", client)
    assert "70,0" in str(exc.value) and "--output" in (exc.value.hint or "")
    assert state.requests == []
    state.body = HUMAN + "h" * 65_000  # fits alone, and so does the report: not together
    with pytest.raises(BadInput, match=r"the description would be 65,[0-9]{3} characters"):
        publish("vime/vime#7", "## Summary\n\n" + "r" * 500 + "\n", client)
    assert [m for m, _, _ in state.requests] == ["GET"]
    assert publish("vime/vime#7", "## Summary\n\nshort\n", client).changed is True


def test_publish_sets_the_title_with_the_body_and_only_on_change(github, tmp_path: Path) -> None:
    # Issue 29 item 14: the title was in the JSON only. The sync PR's title is the report's.
    state, api = github
    client = _client(api, tmp_path)
    title = "[Sync] Mirror Slime through 8c17b676 (#2437/#2434)"
    done = publish("vime/vime#7", "r\n", client, title=title)
    assert done.changed and done.title == title and state.title == title
    (patch,) = [p for m, _, p in state.requests if m == "PATCH"]
    assert patch is not None and set(patch) == {"title", "body"}  # one PATCH for both
    assert not publish("vime/vime#7", "r\n", client, title=title).changed
    state.title = "edited by hand"
    assert publish("vime/vime#7", "r\n", client, title=title).changed and state.title == title
    assert [p for m, _, p in state.requests if m == "PATCH"][-1] == {"title": title, "body": state.body}
    # Without a title only the body is sent, the title a human wrote stays.
    state.title = "kept"
    publish("vime/vime#7", "r2\n", client)
    assert state.title == "kept"


def test_a_title_cannot_ping_or_break_lines() -> None:
    from vimesync.report.publish import MAX_TITLE, pr_title

    shown = pr_title("[Sync] Mirror @octocat\nfixes\x1b[31m" + "x" * 400)
    assert "@octocat" not in shown and "\n" not in shown and "\x1b" not in shown
    assert "@\u2060octocat" in shown and len(shown) == MAX_TITLE
