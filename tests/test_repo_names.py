"""One definition of an owner/name repository (github.REPO_PATTERN) and of the cache folder
(Settings.cache_dir): every place that checks or uses one agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync import github
from vimesync.errors import BadInput, GitHubError
from vimesync.report.links import find_refs, github_repo_of
from vimesync.report.publish import parse_target
from vimesync.settings import GitHubSettings, Settings

GOOD = ["THUDM/slime", "vllm-project/vllm", "a/b.c_d-e", "x" * 39 + "/" + "y" * 100]
BAD = ["slime", "a/b/c", "-a/b", "a_b/c", "a/b c", "a/b\n", "x" * 40 + "/y", "a/" + "y" * 101, "/b", "a/"]


@pytest.mark.parametrize("name", GOOD)
def test_good_names_pass_every_check(name: str) -> None:
    assert github.is_repo_name(name)
    assert parse_target(f"{name}#12") == (name, 12)
    assert [r.text for r in find_refs(f"see {name}#12 here")] == [f"{name}#12"]
    assert github_repo_of(f"https://github.com/{name}.git") == name
    github.GitHubClient(name, GitHubSettings(cache=Path("/nonexistent")))


@pytest.mark.parametrize("name", BAD)
def test_bad_names_fail_every_check(name: str) -> None:
    assert not github.is_repo_name(name)
    with pytest.raises(BadInput):
        parse_target(f"{name}#12")
    with pytest.raises(GitHubError, match="not an owner/name repository"):
        github.GitHubClient(name, GitHubSettings(cache=Path("/nonexistent")))


def test_one_cache_folder_resolver(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VIMESYNC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Settings.capture().github.cache == tmp_path / "xdg" / "vimesync" / "github"
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "mine"))
    settings = Settings.capture()
    assert settings.github.cache == tmp_path / "mine" / "github" and settings.cache_dir == tmp_path / "mine"
