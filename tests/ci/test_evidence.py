"""``vimesync ci`` against a real HTTP server on loopback serving GitHub-shaped JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.evidence import HEAD, OLD, ci_cli, evidence_server
from tests.builders.fakegithub import TOKEN, FakeGitHub
from vimesync.ci.evidence import read_evidence
from vimesync.ci.verdict import evidence_to_dict
from vimesync.errors import BadInput, GitHubError
from vimesync.github import ClientLimits, GitHubClient, WaitBudget
from vimesync.report.evidencemd import render_ci
from vimesync.settings import GitHubSettings


def status(context: str, state: str, build: int | None = None, **kw: Any) -> dict[str, Any]:
    url = f"https://buildkite.com/vime-org/{context.split('/')[-1]}/builds/{build}" if build else ""
    return {"context": context, "state": state, "description": kw.get("description", ""), "target_url": url}


def run(
    name: str, conclusion: str | None, status: str = "completed", app: str = "GitHub Actions", suite: int = 1
) -> dict:
    return {
        "name": name,
        "status": status,
        "conclusion": conclusion,
        "app": {"name": app},
        "html_url": "",
        "check_suite": {"id": suite},
    }


@pytest.fixture
def server() -> Iterator[tuple[FakeGitHub, str]]:
    with evidence_server() as served:
        yield served


def _client(url: str, tmp_path: Path, **kw: Any) -> tuple[GitHubClient, list[float]]:
    slept: list[float] = []
    settings = GitHubSettings(token=TOKEN, api=url, cache=tmp_path / "c")
    limits = ClientLimits(**kw)
    client = GitHubClient(
        "vime-org/vime", settings, limits=limits, wait_budget=WaitBudget(60.0), sleep=slept.append
    )
    return client, slept


@pytest.mark.slow
def test_green_when_every_required_context_succeeded(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("buildkite/vime", "success", 1454)]
    fake.check_runs[HEAD] = [run("lint", "success"), run("docs", "skipped")]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, sha=HEAD, required=["buildkite/vime", "GitHub Actions / lint"])
    assert e.verdict == "green" and e.green and e.missing == ()
    assert [r.label for r in e.results] == [
        "GitHub Actions / docs",
        "GitHub Actions / lint",
        "buildkite/vime #1454",
    ]


@pytest.mark.slow
def test_pending_failing_and_missing(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    client, _ = _client(url, tmp_path)
    fake.statuses[HEAD] = [status("buildkite/vime", "pending", 1454)]
    assert read_evidence(client, sha=HEAD, required=["buildkite/vime"]).verdict == "pending"
    fake.check_runs[HEAD] = [run("gpu-1", None, status="in_progress"), run("lint", "timed_out")]
    e = read_evidence(client, sha=HEAD, required=["buildkite/vime"])
    assert e.verdict == "failing" and [r.label for r in e.failing] == ["GitHub Actions / lint"]
    fake.statuses[HEAD] = [status("buildkite/vime", "success", 1454)]
    fake.check_runs[HEAD] = []
    e = read_evidence(client, sha=HEAD, required=["buildkite/vime", "gpu-suite-6"])
    assert e.verdict == "missing" and e.missing == ("gpu-suite-6",)
    fake.statuses[HEAD] = []
    assert read_evidence(client, sha=HEAD).verdict == "missing"  # nothing at all is no evidence


def test_pr_head_with_earlier_commits_as_not_evidence(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("buildkite/vime", "pending", 1454)]
    fake.statuses[OLD] = [status("buildkite/vime", "success", 1429, description="50 jobs passed")]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, pr=7, required=["buildkite/vime"])
    assert e.sha == HEAD and e.verdict == "pending"  # the earlier green build never counts
    assert [(r.label, r.sha) for r in e.earlier] == [("buildkite/vime #1429", OLD)]
    md = "\n".join(render_ci(e))
    assert "at PR #7 head aaaaaaaa: **pending**" in md
    assert "Not evidence for aaaaaaaa (earlier commits of PR #7):" in md and "on bbbbbbbb" in md
    with pytest.raises(BadInput, match="is not the current head of PR #7"):
        read_evidence(client, pr=7, sha=OLD)


def test_paged_statuses_and_check_runs(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status(f"ctx-{i:03}", "success") for i in range(230)]
    fake.check_runs[HEAD] = [run(f"job-{i:03}", "success") for i in range(150)]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, sha=HEAD, required=["ctx-229", "GitHub Actions / job-149"])
    assert len(e.results) == 380 and e.verdict == "green"
    pages = [
        q.get("page") for (p, _), q in zip(fake.requests, fake.queries, strict=True) if p.endswith("/status")
    ]
    assert pages == [["1"], ["2"], ["3"]]


def test_etag_304_revalidates(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("buildkite/vime", "success", 1)]
    first, _ = _client(url, tmp_path)
    read_evidence(first, sha=HEAD)
    second, _ = _client(url, tmp_path)
    assert read_evidence(second, sha=HEAD).verdict == "green" and second.not_modified == 2
    fake.statuses[HEAD] = [status("buildkite/vime", "failure", 2)]  # a change is never hidden by the cache
    third, _ = _client(url, tmp_path)
    assert read_evidence(third, sha=HEAD).verdict == "failing"


@pytest.mark.parametrize("code", [403, 429])
def test_rate_limits_wait_a_bounded_time(server: tuple[FakeGitHub, str], tmp_path: Path, code: int) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("x", "success")]
    fake.script = [(code, {"Retry-After": "3"})]
    client, slept = _client(url, tmp_path)
    assert read_evidence(client, sha=HEAD).verdict == "green" and slept == [3.0]
    fake.script = [(code, {"Retry-After": "7200"})]
    client, slept = _client(url, tmp_path, max_wait=30)
    with pytest.raises(GitHubError, match="rate limit"):
        read_evidence(client, sha=HEAD)
    assert slept == []


def test_server_errors_are_retried_then_fail(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("x", "success")]
    fake.script = [(502, {}), (503, {})]
    client, slept = _client(url, tmp_path, retries=3)
    assert read_evidence(client, sha=HEAD).verdict == "green" and len(slept) == 2
    fake.script = [(500, {})] * 5
    client, _ = _client(url, tmp_path, retries=2)
    with pytest.raises(GitHubError, match="500"):
        read_evidence(client, sha=HEAD)


def test_wrong_shapes_are_github_errors(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = ["not an object"]  # type: ignore[list-item]
    client, _ = _client(url, tmp_path)
    with pytest.raises(GitHubError, match="unexpected answer"):
        read_evidence(client, sha=HEAD)
    fake.statuses[HEAD] = []
    fake.heads[8] = "not-a-sha"
    with pytest.raises(GitHubError, match="head sha"):
        read_evidence(client, pr=8)


EVIL = "ctx `|` <img src=x> [a](javascript:x) \x1b[2J\u202e\n## forged @admin"


def test_hostile_contexts_cannot_break_markdown_json_or_text(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    fake, url = server
    fake.statuses[HEAD] = [
        {"context": EVIL, "state": "failure", "description": EVIL, "target_url": "javascript:alert(1)"},
        {
            "context": "buildkite/vime",
            "state": "success",
            "description": "",
            "target_url": "https://buildkite.com/o/vime/builds/9) [x](https://evil",
        },
    ]
    fake.check_runs[HEAD] = [run(EVIL, "failure", app=EVIL)]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, sha=HEAD, required=[EVIL])
    assert e.verdict == "failing" and e.missing == ()
    md = "\n".join(render_ci(e))
    assert not [line for line in md.splitlines() if line.startswith("#")]
    assert "\x1b" not in md and "\u202e" not in md
    outside_code = re.sub(r"(`+).*?\1", "", md)  # what GitHub would read as Markdown/HTML
    assert "<img" not in outside_code.replace("\\<img", "")
    assert "](javascript:" not in outside_code.replace("\\](javascript:", "")
    assert "](https://evil" not in md
    assert "(https://buildkite.com/o/vime/builds/9%29%20%5Bx%5D%28https://evil)" in md
    doc = json.loads(json.dumps(evidence_to_dict(e), ensure_ascii=True))
    assert doc["failing"] == [EVIL, f"{EVIL} / {EVIL}"] and doc["required"] == [EVIL]


@pytest.mark.slow
def test_cli_text_shows_hostile_contexts_as_text(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [{"context": EVIL, "state": "error", "description": EVIL, "target_url": EVIL}]
    proc = ci_cli(url, tmp_path, "--repo", "vime-org/vime", "--sha", HEAD)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\\x1b[2J\\u202e\\n## forged @admin: error" in proc.stdout  # escaped, on its own line
    assert not [line for line in proc.stdout.splitlines() if line.startswith("## forged")]


@pytest.mark.slow
def test_cli_exit_codes_text_and_json(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [status("buildkite/vime", "pending", 1454)]
    fake.statuses[OLD] = [status("buildkite/vime", "success", 1429)]
    proc = ci_cli(url, tmp_path, "--repo", "vime-org/vime", "--pr", "7", "--require", "buildkite/vime")
    assert proc.returncode == 1, proc.stderr
    assert "CI of vime-org/vime at aaaaaaaa (head of PR #7): pending" in proc.stdout
    assert "buildkite/vime #1454: pending" in proc.stdout
    assert (
        "Not evidence for aaaaaaaa" in proc.stdout
        and "buildkite/vime #1429: success on bbbbbbbb" in proc.stdout
    )
    assert TOKEN not in proc.stdout + proc.stderr
    fake.statuses[HEAD] = [status("buildkite/vime", "success", 1454)]
    proc = ci_cli(url, tmp_path, "--repo", "vime-org/vime", "--sha", HEAD, "--json")
    doc = json.loads(proc.stdout)
    assert (
        proc.returncode == 0
        and doc["verdict"] == "green"
        and doc["results"][0]["label"] == "buildkite/vime #1454"
    )
    (tmp_path / "vimesync.toml").write_text('[ci]\nrepo = "vime-org/vime"\nrequired = ["gpu-suite"]\n')
    proc = ci_cli(url, tmp_path, "--sha", HEAD)
    assert proc.returncode == 1 and "gpu-suite: required, never reported on aaaaaaaa" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needle",
    [
        (["--repo", "vime-org/vime"], "pass --pr N or --sha SHA"),
        (["--repo", "vime-org/vime", "--sha", "abc123"], "expected a full commit sha"),
        (["--repo", "not a repo", "--sha", HEAD], "expected owner/name"),
        (["--sha", HEAD], "no repository"),
        (["--repo", "vime-org/vime", "--pr", "0"], "--pr"),
    ],
)
def test_cli_bad_input_exits_2(
    server: tuple[FakeGitHub, str], tmp_path: Path, args: list[str], needle: str
) -> None:
    _, url = server
    proc = ci_cli(url, tmp_path, *args)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_cli_junit_has_a_case_per_required_context(server: tuple[FakeGitHub, str], tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    fake, url = server
    fake.statuses[HEAD] = [status("buildkite/vime", "success", 1454)]
    junit = tmp_path / "ci.xml"
    args = ("--repo", "vime-org/vime", "--sha", HEAD, "--require", "buildkite/vime", "--require", "gpu")
    proc = ci_cli(url, tmp_path, *args, "--json", "--junit", str(junit))
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["kind"] == "ci" and doc["exit_code"] == 1 and doc["ok"] is False
    cases = {c.get("name"): c.find("failure") for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"buildkite/vime #1454", "gpu"}  # a context by its label, as the text shows it
    assert cases["buildkite/vime #1454"] is None and cases["gpu"] is not None


def test_a_failing_run_is_not_hidden_by_a_passing_one_of_the_same_name(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    """Two runs of one app and name in two check suites (two workflows with a lint job, or one a
    pull request added to pass): every one counts (issue 18, finding 4)."""
    fake, url = server
    fake.check_runs[HEAD] = [run("lint", "success", suite=2), run("lint", "failure", suite=1)]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, sha=HEAD, required=["GitHub Actions / lint"])
    assert e.verdict == "failing" and [r.state for r in e.results] == ["failure", "success"]


def test_a_check_run_does_not_stand_in_for_a_status_context(
    server: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    """A workflow a pull request adds, with a job named like the required Buildkite status,
    does not satisfy it; a check run is required by its app and name."""
    fake, url = server
    fake.check_runs[HEAD] = [run("buildkite/vime", "success")]
    client, _ = _client(url, tmp_path)
    e = read_evidence(client, sha=HEAD, required=["buildkite/vime"])
    assert e.verdict == "missing" and e.missing == ("buildkite/vime",)
    e = read_evidence(client, sha=HEAD, required=["GitHub Actions / buildkite/vime"])
    assert e.verdict == "green"
