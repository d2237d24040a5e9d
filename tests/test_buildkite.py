"""The Buildkite choke point against a loopback server: the documented shape read, and hostile
answers (huge, not JSON, wrong shapes, redirects, control characters) refused or made plain,
never with the token in a message."""

from __future__ import annotations

import json

import pytest

from tests.builders.buildkite import TOKEN, FakeBuildkite, agent_lost_build, job, serve
from vimesync import buildkite
from vimesync.errors import BuildkiteError
from vimesync.settings import BuildkiteSettings, Settings

SHA = "f" * 40


def _builds(fake: FakeBuildkite) -> list[buildkite.Build]:
    with serve(fake) as url:
        return buildkite.builds_of_commit("vime/vime", SHA, BuildkiteSettings(token=TOKEN, api=url))


def test_builds_of_exactly_the_commit_newest_first_with_their_jobs() -> None:
    fake = FakeBuildkite()
    fake.builds = [agent_lost_build(1440, SHA), agent_lost_build(1445, SHA), agent_lost_build(9, "e" * 40)]
    builds = _builds(fake)
    assert [b.number for b in builds] == [1445, 1440]
    lost = next(j for j in builds[0].jobs if j.id == "lost")
    assert (lost.exit_status, lost.retried, lost.retried_in_job_id) == (-1, True, "retry")
    path, query, auth = fake.requests[0]
    assert path == "/v2/organizations/vime/pipelines/vime/builds" and query["commit"] == [SHA]
    assert auth == f"Bearer {TOKEN}"


def test_pages_are_followed_and_capped() -> None:
    fake = FakeBuildkite()
    fake.builds = [{**agent_lost_build(n, SHA, passing=0)} for n in range(150)]
    assert len(_builds(fake)) == 150 and len(fake.requests) == 2
    fake = FakeBuildkite()
    many = json.dumps([{"number": 1, "commit": SHA, "jobs": []}] * 100).encode()
    fake.raw = (200, {}, many)  # every page full: never ends
    with pytest.raises(BuildkiteError, match="more than 10 pages"):
        _builds(fake)
    assert len(fake.requests) == buildkite.MAX_PAGES


@pytest.mark.parametrize(
    "status, body, needle",
    [
        (200, b"<html>not json</html>", "not JSON"),
        (200, b'{"builds": []}', "a list of builds"),
        (200, b'["x"]', "builds as objects"),
        (200, b'[{"number": "1", "jobs": []}]', "without a number"),
        (200, b'[{"number": 1, "jobs": {}}]', "without a number or a list of jobs"),
        (200, b'[{"number": 1, "jobs": [3]}]', "jobs as objects"),
        (200, b"[" + b"{}," * 100_001 + b"{}]", "JSON objects"),
        pytest.param(
            200,
            b'[{"number": 1, "jobs": [], "state": ' + b"[" * 900 + b"]" * 900 + b"}]",
            "nested too deeply",
            id="nested-900",
        ),
        pytest.param(200, b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="nested-100000"),
        (401, b"{}", "BUILDKITE_API_TOKEN was refused"),
        (500, b"{}", "HTTP 500"),
    ],
)
def test_hostile_answers_are_refused_naming_the_endpoint(status: int, body: bytes, needle: str) -> None:
    fake = FakeBuildkite()
    fake.raw = (status, {}, body)
    with pytest.raises(BuildkiteError, match=needle) as exc:
        _builds(fake)
    assert TOKEN not in str(exc.value) and "/builds" in str(exc.value)


def test_a_huge_answer_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buildkite, "MAX_BYTES", 1024)
    fake = FakeBuildkite()
    fake.raw = (200, {}, b"[" + b" " * 4096 + b"]")
    with pytest.raises(BuildkiteError, match="larger than"):
        _builds(fake)


def test_a_redirect_is_never_followed() -> None:
    fake = FakeBuildkite()
    fake.raw = (302, {"Location": "http://elsewhere.invalid/steal"}, b"")
    with pytest.raises(BuildkiteError, match="redirect") as exc:
        _builds(fake)
    assert TOKEN not in str(exc.value) and len(fake.requests) == 1


def test_an_unreachable_api_is_one_error() -> None:
    with pytest.raises(BuildkiteError, match="unreachable"):
        buildkite.builds_of_commit("vime/vime", SHA, BuildkiteSettings(token=TOKEN, api="http://127.0.0.1:9"))


def test_wrong_field_types_and_long_names_are_made_plain() -> None:
    fake = FakeBuildkite()
    weird = job("x" * 5000, exit_status="-1")  # type: ignore[arg-type]
    weird["retried"] = "yes"  # only true is true
    fake.builds = [{"number": 3, "state": 7, "commit": SHA, "web_url": None, "jobs": [weird]}]
    (build,) = _builds(fake)
    (j,) = build.jobs
    assert (build.state, build.url, len(j.name), j.exit_status, j.retried) == ("", "", 1024, -1, False)


@pytest.mark.parametrize("pipeline", ["vime", "Vime/x", "../x/y", "a/b/c", "a/" + "b" * 101])
def test_a_pipeline_must_be_two_slugs(pipeline: str) -> None:
    with pytest.raises(BuildkiteError, match="org/pipeline"):
        buildkite.check_pipeline(pipeline, "--pipeline")


def test_trickled_headers_meet_the_deadline() -> None:
    """Each header byte in time for the 30 s read timeout, the headers never done: the overall
    deadline still ends the call, as the GitHub client's does."""
    import time

    from tests.builders.rawhttp import endless, raw_server

    with raw_server(lambda _: endless(b"HTTP/1.1 200 OK\r\nX-Slow: ")) as server:
        url = server.url
        start = time.monotonic()
        with pytest.raises(BuildkiteError) as exc:
            buildkite.builds_of_commit(
                "vime/vime", SHA, BuildkiteSettings(token=TOKEN, api=url, deadline=1.0)
            )
        took = time.monotonic() - start
    assert "no answer (status line and headers) within 1 s" in str(exc.value)
    assert TOKEN not in str(exc.value) and took < 5


def test_the_api_root_is_the_host_and_any_path_below_it() -> None:
    """The client's paths start with /v2/: the default root is the host alone, and a root below
    a path (a proxy) keeps it."""
    assert Settings.of({}).buildkite.api == "https://api.buildkite.com"
    fake = FakeBuildkite()
    with serve(fake) as url:
        env = {"VIMESYNC_BUILDKITE_API": url + "/proxy/", "BUILDKITE_API_TOKEN": TOKEN}
        assert buildkite.builds_of_commit("vime/vime", SHA, Settings.of(env).buildkite) == []
    assert fake.requests[0][0] == "/proxy/v2/organizations/vime/pipelines/vime/builds"


@pytest.mark.parametrize(
    "status, body, needle",
    [
        (200, b"[]", "builds as objects"),
        (200, b'{"number": 8, "jobs": []}', "the answer is another build"),
        (200, b'{"number": 7, "jobs": "x"}', "without a number or a list of jobs"),
        (200, b'{"number": 7, "jobs": [], "x": ' + b"[" * 80 + b"]" * 80 + b"}", "nested too deeply"),
        (500, b"{}", "HTTP 500"),
    ],
)
def test_a_build_by_number_is_that_build_or_none(status: int, body: bytes, needle: str) -> None:
    fake = FakeBuildkite()
    fake.builds = [agent_lost_build(7, SHA)]
    settings_of = BuildkiteSettings
    with serve(fake) as url:
        build = buildkite.build_by_number("vime/vime", 7, settings_of(token=TOKEN, api=url))
        assert build is not None and (build.number, build.commit, build.state) == (7, SHA, "passed")
        assert buildkite.build_by_number("vime/vime", 8, settings_of(token=TOKEN, api=url)) is None
        assert fake.requests[0][0] == "/v2/organizations/vime/pipelines/vime/builds/7"
        fake.raw = (status, {}, body)
        with pytest.raises(BuildkiteError, match=needle) as exc:
            buildkite.build_by_number("vime/vime", 7, settings_of(token=TOKEN, api=url))
        assert TOKEN not in str(exc.value)
