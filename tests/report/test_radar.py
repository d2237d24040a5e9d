"""``pin radar``: the upstream state of every PR a patch references, against a GitHub stand-in on
loopback serving a merged, an open and a closed PR, and a real engine history for the merge commits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.stack import ENGINE, Stack

REPO = "eng-org/eng"


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    readme = ENGINE["README.md"]
    heads = {
        "in-pin.patch": f"Origin: upstream, https://github.com/{REPO}/pull/5\n",
        "merged.patch": f"Forwarded: {REPO}#1\n",
        "open.patch": f"Bug: https://github.com/{REPO}/pull/2\n",
        "closed.patch": f"Origin: {REPO}#3\n",
        "other-repo.patch": "Origin: someone/else#1\n",
        "issue.patch": f"Bug: https://github.com/{REPO}/issues/4\n",
    }
    for i, (name, head) in enumerate(heads.items()):
        readme += f"line {i}\n"
        s.add(name, {"README.md": readme}, header=f"Description: {name}\n{head}---\n")
    return s


@pytest.fixture()
def fake(stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    later = stack.release("v2", {"eng/util.py": "x = 1\n"})
    stack.release("v3", {"eng/util.py": "x = 2\n"})
    gh = FakeGitHub(range(1, 2))
    gh.pull_states = {
        1: {"state": "closed", "merged": True, "merge_commit_sha": later, "title": "merged"},
        2: {"state": "open", "merged": False, "merge_commit_sha": "e" * 40},
        3: {"state": "closed", "merged": False, "merge_commit_sha": "d" * 40},
        5: {"state": "closed", "merged": True, "merge_commit_sha": stack.pin},
    }
    gh.missing = {4}
    with serve(gh) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        yield gh


def _args(s: Stack) -> list[str]:
    return ["pin", "radar", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series")]


def test_each_patch_gets_the_verdict_of_its_upstream_pr(
    stack: Stack, fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *_args(stack), "--engine-repo", REPO, "--json")
    assert code == 0, err
    doc = json.loads(out)
    got = {p["name"]: (p["verdict"], p["words"]) for p in doc["patches"]}
    assert got["in-pin.patch"] == ("in-pin", "in the pin: drop it")
    assert got["merged.patch"] == (
        "merged",
        "merged upstream, absent from the pin: keep until the next bump (first in v2)",
    )
    assert got["open.patch"][0] == "open"
    assert got["closed.patch"] == ("closed", "closed unmerged: the patch is ours to keep")
    assert got["other-repo.patch"] == ("none", "no upstream reference")
    assert got["issue.patch"][0] == "unknown" and "not a pull request" in got["issue.patch"][1]
    asked = sorted(p for p, _ in fake.requests if "/pulls/" in p)
    assert asked == [f"/repos/{REPO}/pulls/{n}" for n in (1, 2, 3, 4, 5)]
    code, out, _ = run(capsys, *_args(stack), "--engine-repo", REPO)
    assert code == 0 and "in the pin: drop it" in out and "first in v2" in out
    code, out, _ = run(capsys, *_args(stack), "--engine-repo", REPO, "--format", "markdown")
    assert code == 0 and "| `merged.patch` |" in out


def test_offline_or_without_a_token_it_says_what_it_could_not_ask(
    stack: Stack, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *_args(stack), "--engine-repo", REPO, "--offline", "--json")
    doc = json.loads(out)
    assert code == 0 and not [p for p, _ in fake.requests if "/pulls/" in p]
    words = {p["name"]: p["words"] for p in doc["patches"]}
    assert words["merged.patch"] == f"not known: could not ask GitHub about {REPO}#1: --offline"
    assert any("--offline" in n for n in doc["notes"])
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.delenv("GH_TOKEN", raising=False)
    code, out, err = run(capsys, *_args(stack), "--engine-repo", REPO)
    assert code == 0 and "no GITHUB_TOKEN" in out + err


def test_an_unreachable_github_is_asked_once(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VIMESYNC_GITHUB_API", "http://127.0.0.1:9")  # discard: nothing listens
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run(capsys, *_args(stack), "--engine-repo", REPO, "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert {p["verdict"] for p in doc["patches"]} == {"unknown", "none"}
    assert TOKEN not in out + err


def test_no_engine_repo_is_bad_input(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *_args(stack))
    assert code == 2 and "--engine-repo" in err
