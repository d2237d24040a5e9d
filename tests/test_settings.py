"""The job's environment, read once: what each variable sets, and a malformed one named, never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync.errors import BadInput
from vimesync.settings import GITHUB_API, Settings, install, installed


def test_an_empty_environment_has_every_default() -> None:
    s = Settings.of({})
    assert s.github.token is None and s.github.api == GITHUB_API
    assert not s.untrusted and s.config_file is None and s.step_summary is None
    assert s.pip_timeout == 900.0


@pytest.mark.parametrize(
    "env, untrusted",
    [
        ({"CI": "true"}, True),
        ({"CI": "false"}, False),
        ({"BUILDKITE": "1"}, True),
        ({"CI": "1", "VIMESYNC_UNTRUSTED": "0"}, False),
        ({"VIMESYNC_UNTRUSTED": "yes"}, True),
    ],
)
def test_the_trust_mode_follows_the_ci_markers(env: dict[str, str], untrusted: bool) -> None:
    assert Settings.of(env).untrusted is untrusted


def test_github_token_and_api_root() -> None:
    s = Settings.of({"GH_TOKEN": "t2", "GITHUB_API_URL": "https://ghe.example/api/v3/"})
    assert (s.github.token, s.github.api) == ("t2", "https://ghe.example/api/v3")
    s = Settings.of({"GITHUB_TOKEN": "t1", "GH_TOKEN": "t2", "VIMESYNC_GITHUB_API": "http://127.0.0.1:9"})
    assert (s.github.token, s.github.api) == ("t1", "http://127.0.0.1:9")


@pytest.mark.parametrize("value", ["soon", "-1", "0", "nan", "inf"])
def test_a_malformed_number_names_the_variable_not_its_value(value: str) -> None:
    with pytest.raises(BadInput) as exc:
        _ = Settings.of({"VIMESYNC_PIP_TIMEOUT": value}).pip_timeout
    assert "VIMESYNC_PIP_TIMEOUT" in exc.value.message and value not in exc.value.message


def test_the_cache_folder_order(tmp_path: Path) -> None:
    assert Settings.of({"VIMESYNC_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}).cache_dir == Path("/c")
    assert Settings.of({"XDG_CACHE_HOME": "/x"}).cache_dir == Path("/x/vimesync")
    assert Settings.of({"HOME": str(tmp_path)}).cache_dir == tmp_path / ".cache/vimesync"


def test_a_child_environment_drops_secrets_unless_asked() -> None:
    s = Settings.of({"PATH": "/bin", "GITHUB_TOKEN": "t", "MY_SECRET": "s", "LC_ALL": "C", "X": "1"})
    assert s.child_env() == {"PATH": "/bin", "LC_ALL": "C", "X": "1"}
    assert s.child_env(allow={"PATH"}, prefixes=("LC_",)) == {"PATH": "/bin", "LC_ALL": "C"}
    assert "GITHUB_TOKEN" in s.child_env(secrets=True)


def test_the_snapshot_does_not_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "before")
    s = Settings.capture()
    monkeypatch.setenv("GITHUB_TOKEN", "after")
    assert s.github.token == "before"
    with install(s):
        assert installed() is s
    assert installed().github.token == "after"


def test_the_registry_deadline_is_at_most_an_hour() -> None:
    assert Settings.of({"VIMESYNC_REGISTRY_DEADLINE": "90"}).registry.deadline == 90.0
    with pytest.raises(BadInput, match="VIMESYNC_REGISTRY_DEADLINE: expected seconds from 1 to 3600"):
        _ = Settings.of({"VIMESYNC_REGISTRY_DEADLINE": "7200"}).registry
