"""vimesync.github against a real HTTP server on loopback serving GitHub-shaped JSON."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from vimesync.errors import BadInput, GitHubError
from vimesync.github import ClientLimits, GitHubClient, PullInfo, WaitBudget, fetch_metadata
from vimesync.settings import GitHubSettings, Settings


@pytest.fixture
def server() -> Iterator[tuple[FakeGitHub, str]]:
    fake = FakeGitHub(range(1, 251))
    with serve(fake) as url:
        yield fake, url


def _client(
    url: str, tmp_path: Path, *, deadline: float = 60.0, **kw: Any
) -> tuple[GitHubClient, list[float]]:
    """A client of THUDM/slime at ``url``; ``kw``: ClientLimits' fields, wait_budget, clock."""
    slept: list[float] = []
    budget = kw.pop("wait_budget", WaitBudget(60.0))  # not the process's: tests wait by the dozen
    clock = kw.pop("clock", None)
    settings = GitHubSettings(token=TOKEN, api=url, cache=tmp_path / "cache", deadline=deadline)
    extra: dict[str, Any] = {"clock": clock} if clock else {}
    client = GitHubClient(
        "THUDM/slime", settings, limits=ClientLimits(**kw), wait_budget=budget, sleep=slept.append, **extra
    )
    return client, slept


def test_pages_of_100_stop_at_the_oldest_wanted(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    client, _ = _client(url, tmp_path)
    got = client.merged_prs([121, 150, 240, 129])
    assert sorted(got) == [121, 129]  # multiples of 10 are closed without merge
    assert got[129].labels == ("npu",) and got[129].author == "user129" and got[129].title == "PR title 129"
    assert got[121].merge_commit == f"{121:040x}" and got[121].labels == ()
    assert len(fake.requests) == 2  # 250..151, 150..51: then past the oldest wanted
    assert all(q["per_page"] == ["100"] for q in fake.queries)
    assert fake.requests[0][1]["authorization"].endswith(TOKEN)  # sent to the server, and only there


def test_etag_cache_revalidates_with_304(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    first, _ = _client(url, tmp_path)
    a = first.merged_prs([240])
    second, _ = _client(url, tmp_path)
    b = second.merged_prs([240])
    assert a == b and second.not_modified == 1
    assert fake.requests[-1][1].get("if-none-match")
    cached = "".join(p.read_text() for p in (tmp_path / "cache").iterdir())
    assert TOKEN not in cached


def test_files_are_paged_too(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    _, url = server
    client, _ = _client(url, tmp_path)
    assert client.merged_prs([249], files=True)[249].files == ("slime/a.py", "docs/b.md")


@pytest.mark.parametrize("status", [429, 403])
def test_short_rate_limit_waits_then_retries(
    server: tuple[FakeGitHub, str], tmp_path: Path, status: int
) -> None:
    fake, url = server
    fake.script = [(status, {"Retry-After": "2"})]
    client, slept = _client(url, tmp_path)
    assert 249 in client.merged_prs([249])
    assert slept == [2.0]


def test_long_rate_limit_fails_clearly_without_sleeping(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.script = [(403, {"Retry-After": "3600"})]
    client, slept = _client(url, tmp_path, max_wait=30)
    with pytest.raises(GitHubError) as exc:
        client.merged_prs([249])
    assert "3600s" in exc.value.message and slept == []
    assert TOKEN not in exc.value.message + (exc.value.hint or "")


def test_rate_limit_reset_header(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    reset = str(1_900_000_000 + 7200)
    fake.script = [(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})]
    client, slept = _client(url, tmp_path, clock=lambda: 1_900_000_000.0)
    with pytest.raises(GitHubError, match="wait 7200s"):
        client.merged_prs([249])
    assert slept == []


def test_a_near_rate_limit_reset_is_waited_on_the_injected_clock(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.script = [(429, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1900000012"})]
    client, slept = _client(url, tmp_path, clock=lambda: 1_900_000_000.0)
    assert 249 in client.merged_prs([249])
    assert slept == [12.0]


def test_no_real_sleep_between_writes(
    server: tuple[FakeGitHub, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyGithub's write throttle (a real time.sleep of up to 1 s before each PATCH) is off."""
    import time

    real: list[float] = []
    monkeypatch.setattr(time, "sleep", real.append)
    fake, url = server
    fake.script = [(502, {}), (429, {"Retry-After": "1"})]
    client, slept = _client(url, tmp_path)
    for body in ("one", "two", "three"):
        client.set_pull_body(7, body)
    assert fake.bodies[7] == "three" and len(slept) == 2 and real == []


def test_plain_403_is_not_a_rate_limit(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.script = [(403, {})]
    client, slept = _client(url, tmp_path)
    with pytest.raises(GitHubError, match=r"refused .*\(403\)"):
        client.merged_prs([249])
    assert slept == []


def test_5xx_retried_a_bounded_number_of_times(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.script = [(502, {}), (503, {})]
    client, slept = _client(url, tmp_path, retries=3)
    assert 249 in client.merged_prs([249])
    assert len(slept) == 2 and all(s <= 4 for s in slept)

    fake.script = [(500, {})] * 5
    client, slept = _client(url, tmp_path / "other", retries=2)
    with pytest.raises(GitHubError, match="500"):
        client.merged_prs([249])
    assert len(slept) == 2


def test_unreachable_server(tmp_path: Path) -> None:
    client, _ = _client("http://127.0.0.1:9", tmp_path, timeout=2)
    with pytest.raises(GitHubError, match="cannot reach GitHub"):
        client.merged_prs([1])


def test_fetch_metadata_takes_the_token_from_the_settings(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    env = {"GITHUB_TOKEN": TOKEN, "VIMESYNC_GITHUB_API": url, "VIMESYNC_CACHE_DIR": str(tmp_path / "c")}
    got = fetch_metadata("THUDM/slime", [249], Settings.of(env).github)
    assert got[249].title == "PR title 249"
    assert fake.requests[0][1]["authorization"] == f"token {TOKEN}"


def test_fetch_metadata_takes_the_api_root_from_github_actions(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    env = {"GITHUB_API_URL": url + "/", "GH_TOKEN": TOKEN, "VIMESYNC_CACHE_DIR": str(tmp_path / "c")}
    assert fetch_metadata("THUDM/slime", [249], Settings.of(env).github)[249].author == "user249"
    assert fake.requests[0][1]["authorization"] == f"token {TOKEN}"


def test_the_token_prefers_github_token() -> None:
    env: dict[str, str] = {}
    assert Settings.of(env).github.token is None
    env["GH_TOKEN"] = "from-gh"
    assert Settings.of(env).github.token == "from-gh"
    env["GITHUB_TOKEN"] = "from-actions"
    assert Settings.of(env).github.token == "from-actions"
    env["GITHUB_TOKEN"] = ""  # set but empty: as if unset
    assert Settings.of(env).github.token == "from-gh"


def test_api_url_order() -> None:
    env: dict[str, str] = {}
    assert Settings.of(env).github.api == "https://api.github.com"
    env["GITHUB_API_URL"] = "https://ghe.example/api/v3/"
    assert Settings.of(env).github.api == "https://ghe.example/api/v3"
    env["VIMESYNC_GITHUB_API"] = "http://127.0.0.1:1"
    assert Settings.of(env).github.api == "http://127.0.0.1:1"


def test_pull_request_is_revalidated_so_never_stale(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.bodies[7] = "first"
    client, _ = _client(url, tmp_path)
    assert client.pull_request(7) == PullInfo(body="first", html_url="https://github.com/THUDM/slime/pull/7")
    assert client.pull_request(7).body == "first" and client.not_modified == 1  # 304: from the cache
    fake.bodies[7] = "edited on GitHub"
    assert client.pull_request(7).body == "edited on GitHub"
    fake.bodies[7] = None
    assert client.pull_request(7).body == ""


def test_set_pull_body_patches_and_the_next_read_sees_it(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.bodies[7] = "old"
    client, _ = _client(url, tmp_path)
    assert client.pull_request(7).body == "old"
    client.set_pull_body(7, "new")
    assert fake.patches == [("/repos/THUDM/slime/pulls/7", {"body": "new"})]
    assert fake.requests[-1][1]["authorization"] == f"token {TOKEN}"
    assert client.pull_request(7).body == "new"


def test_set_pull_body_retries_5xx_and_waits_out_short_rate_limits(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.script = [(502, {}), (429, {"Retry-After": "1"})]
    client, slept = _client(url, tmp_path)
    client.set_pull_body(7, "body")
    assert fake.bodies[7] == "body" and len(fake.patches) == 1 and len(slept) == 2


@pytest.mark.parametrize(("status", "match"), [(401, r"rejected the token \(401\)"), (404, "not found")])
def test_set_pull_body_refusals_are_clean_errors(
    server: tuple[FakeGitHub, str], tmp_path: Path, status: int, match: str
) -> None:
    fake, url = server
    fake.script = [(status, {})]
    client, slept = _client(url, tmp_path)
    with pytest.raises(GitHubError, match=match) as exc:
        client.set_pull_body(7, "body")
    assert TOKEN not in exc.value.message + (exc.value.hint or "") and slept == [] and not fake.patches


# -- a misbehaving server: every bound ends in a GitHubError naming the endpoint, never the token


def _clean(exc: pytest.ExceptionInfo[GitHubError]) -> str:
    text = exc.value.message + " " + (exc.value.hint or "")
    assert TOKEN not in text
    return text


@pytest.mark.slow
def test_a_trickled_answer_meets_the_overall_deadline(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.trickle = 0.02  # each byte in time for the per-read timeout, the whole answer in ~4 minutes
    client, _ = _client(url, tmp_path, timeout=5, deadline=0.3)
    with pytest.raises(GitHubError) as exc:
        client.pull_request(7)
    assert "/repos/THUDM/slime/pulls/7: no complete answer within the deadline" in _clean(exc)


@pytest.mark.parametrize("where", ["another port", "another host", "another scheme"])
def test_a_redirect_elsewhere_is_not_followed(
    server: tuple[FakeGitHub, str], tmp_path: Path, where: str
) -> None:
    fake, url = server
    other = FakeGitHub(range(1, 3))
    with serve(other) as other_url:
        fake.redirect = {
            "another port": f"{other_url}/repos/THUDM/slime/pulls/7",
            "another host": "http://localhost:1/steal",
            "another scheme": url.replace("http://", "https://") + "/x",
        }[where]
        client, _ = _client(url, tmp_path)
        with pytest.raises(GitHubError) as exc:
            client.pull_request(7)
    assert "a redirect to another host (not followed" in _clean(exc)
    assert other.requests == []  # the token went nowhere else


def test_a_redirect_loop_on_the_same_host_is_cut(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.redirect = "/repos/THUDM/slime/pulls/8"  # 7 -> 8 -> 8 ... (PyGithub would recurse)
    client, _ = _client(url, tmp_path)
    with pytest.raises(GitHubError) as exc:
        client.pull_request(7)
    assert "GitHub /repos/THUDM/slime/pulls/7" in _clean(exc)
    assert len(fake.requests) <= 7


@pytest.mark.parametrize("answer", [{"message": "not a list"}, ["a", "b"], [{"number": "12"}], "text", 5])
def test_a_list_of_another_shape_names_the_endpoint(
    server: tuple[FakeGitHub, str], tmp_path: Path, answer: object
) -> None:
    fake, url = server
    fake.lists = answer
    client, _ = _client(url, tmp_path)
    with pytest.raises(GitHubError) as exc:
        client.merged_prs([249])
    assert "unexpected answer for /repos/THUDM/slime/pulls" in _clean(exc)
    if not (isinstance(answer, list) and all(isinstance(i, dict) for i in answer)):
        with pytest.raises(GitHubError, match="unexpected answer for /repos/THUDM/slime/pulls/249/files"):
            client._files(249)


def test_item_fields_of_another_shape_are_dropped(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.prs[1] = {**fake.prs[1], "user": ["x"], "labels": [{"name": 3}, "l"], "title": {"t": 1}}
    client, _ = _client(url, tmp_path)
    meta = client.merged_prs([249])[249]
    assert (meta.author, meta.labels, meta.title) == (None, (), None)
    fake.bodies[7] = ["not", "text"]  # type: ignore[assignment]
    with pytest.raises(GitHubError, match="pulls/7: expected a pull request with a text body"):
        client.pull_request(7)


def test_endless_pages_stop_at_the_page_cap(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.endless = True
    client, _ = _client(url, tmp_path, max_pages=4)
    with pytest.raises(GitHubError) as exc:
        client.merged_prs([1])
    assert "/repos/THUDM/slime/pulls: more than 4 pages" in _clean(exc)
    assert len(fake.requests) == 4


def test_rate_limit_waits_are_bounded_in_total(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    budget = WaitBudget(60.0)  # shared, as by every client of one process
    fake.script = [(429, {"Retry-After": "25"})] * 2
    client, slept = _client(url, tmp_path, wait_budget=budget)
    assert 249 in client.merged_prs([249])
    fake.script = [(429, {"Retry-After": "25"})]
    other, other_slept = _client(url, tmp_path / "other", wait_budget=budget)
    with pytest.raises(GitHubError) as exc:
        other.merged_prs([248])
    assert "beyond what vimesync waits in one run" in _clean(exc)
    assert slept == [25.0, 25.0] and other_slept == []


def test_bounds_come_from_the_environment(tmp_path: Path) -> None:
    env = {"VIMESYNC_GITHUB_DEADLINE": "2.5", "VIMESYNC_GITHUB_API": "http://127.0.0.1:9"}
    assert GitHubClient("a/b", Settings.of(env).github).deadline == 2.5
    with pytest.raises(BadInput, match="VIMESYNC_GITHUB_DEADLINE must be a positive number"):
        _ = Settings.of({**env, "VIMESYNC_GITHUB_DEADLINE": "soon"}).github


@pytest.mark.parametrize("root", ["ftp://ghe.example/api", "http://", "http://ghe.example:port/"])
def test_an_api_root_that_is_no_http_url_is_one_error(root: str, tmp_path: Path) -> None:
    with pytest.raises(GitHubError, match="the GitHub API root .* is not an http"):
        GitHubClient("a/b", GitHubSettings(api=root, cache=tmp_path))
