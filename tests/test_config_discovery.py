"""Which vimesync.toml is read (--config, $VIMESYNC_CONFIG, discovery up to the repository root),
and errors for a missing input that say which config was read and what supplies the input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.app.flags import SyncFlags
from vimesync.app.upstreamsteps import walk
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.check.model import PlanRules, check_options
from vimesync.config import CONFIG_NAME, load_config
from vimesync.errors import BadInput, ConfigError
from vimesync.settings import Settings
from vimesync.upstream.pipeline import parse_range


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "vime"
    Repo(root)
    write(root / CONFIG_NAME, '[upstream]\nname = "Slime"\npin = "pins/slime.toml"\n')
    write(root / "pins/slime.toml", '[upstream]\nsynced = "abc123"\n')
    (root / "vime/deep/er").mkdir(parents=True)
    return root


def test_found_from_a_subfolder(repo: Path) -> None:
    cfg = load_config(cwd=repo / "vime/deep/er")
    assert cfg.file == repo / CONFIG_NAME and cfg.upstream_name == "Slime"
    assert cfg.upstream_pin.synced == "abc123"


def test_the_nearest_config_wins(repo: Path) -> None:
    write(repo / "vime/vimesync.toml", '[upstream]\nname = "Inner"\n')
    assert load_config(cwd=repo / "vime/deep/er").upstream_name == "Inner"


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / CONFIG_NAME, '[upstream]\nname = "Above"\n')
    inner = tmp_path / "checkout"
    Repo(inner)
    (inner / "sub").mkdir()
    cfg = load_config(cwd=inner / "sub")
    assert cfg.file is None and cfg.searched == (inner / "sub", inner)
    assert cfg.provenance() == f"no {CONFIG_NAME} found in {inner / 'sub'} or any folder up to {inner}"


def test_outside_a_repository_only_the_current_folder(tmp_path: Path) -> None:
    write(tmp_path / CONFIG_NAME, '[upstream]\nname = "Stray"\n')
    (tmp_path / "a").mkdir()
    assert load_config(cwd=tmp_path / "a").file is None
    assert load_config(cwd=tmp_path).upstream_name == "Stray"


def test_flag_then_environment_then_discovery(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_cfg = write(tmp_path / "job/env.toml", '[upstream]\nname = "FromEnv"\n')
    flag_cfg = write(tmp_path / "job/flag.toml", '[upstream]\nname = "FromFlag"\n')
    # $VIMESYNC_CONFIG, as the job's settings snapshot names it
    named = Settings.of({"VIMESYNC_CONFIG": str(env_cfg)}).config_file
    assert load_config(cwd=repo, named_by_env=named).upstream_name == "FromEnv"
    assert load_config(flag_cfg, cwd=repo, named_by_env=named).upstream_name == "FromFlag"
    missing = Settings.of({"VIMESYNC_CONFIG": str(tmp_path / "job/missing.toml")}).config_file
    with pytest.raises(ConfigError, match=r"missing\.toml: no such file \(named by \$VIMESYNC_CONFIG\)"):
        load_config(cwd=repo, named_by_env=missing)


def test_a_config_in_a_subfolder_may_name_files_anywhere_in_the_repository(repo: Path) -> None:
    # ci/vimesync.toml naming ../pins/... and ../sop/...: inside the repository, so accepted.
    write(repo / "sop/policy.toml", "")
    write(repo / "pins/e.toml", '[engine]\nseries = "../patches/series"\n')
    write(repo / "patches/series", "")
    cfg = load_config(
        write(
            repo / "ci/vimesync.toml",
            '[upstream]\npin = "../pins/slime.toml"\npolicy = "../sop/policy.toml"\n'
            '[engine]\npin = "../pins/e.toml"\n',
        )
    )
    assert cfg.upstream_pin.synced == "abc123" and cfg.policy == repo / "sop/policy.toml"
    assert cfg.engine.series == repo / "patches/series"


def test_a_config_in_a_subfolder_still_cannot_leave_the_repository(repo: Path, tmp_path: Path) -> None:
    write(tmp_path / "outside.toml", '[upstream]\nsynced = "x"\n')
    with pytest.raises(ConfigError, match=r"\[upstream\] pin must be inside the repository") as exc:
        load_config(write(repo / "ci/vimesync.toml", '[upstream]\npin = "../../outside.toml"\n'))
    assert str(repo) in exc.value.message


def test_missing_upstream_names_the_config_and_the_key(repo: Path) -> None:
    ws = Workspace.resolve(SyncFlags(range_="HEAD"), Settings.of({}), cwd=repo / "vime")
    with pytest.raises(BadInput) as exc:
        walk(ws)
    assert str(repo / CONFIG_NAME) in exc.value.message and "[upstream] path" in exc.value.message
    assert (
        exc.value.hint
        == f"pass --upstream PATH, or set [upstream] path in {repo / CONFIG_NAME} (see docs/config.md)"
    )


def test_missing_upstream_without_a_config_says_where_it_looked(tmp_path: Path) -> None:
    Repo(tmp_path / "r")
    ws = Workspace.resolve(SyncFlags(range_="HEAD"), Settings.of({}), cwd=tmp_path / "r")
    with pytest.raises(BadInput) as exc:
        walk(ws)
    assert exc.value.message == (
        f"no upstream repository given: pass --upstream PATH (no {CONFIG_NAME} found in {tmp_path / 'r'})"
    )
    assert exc.value.hint is not None and "vimesync init" in exc.value.hint


def test_missing_synced_names_the_pin(repo: Path) -> None:
    write(repo / "pins/slime.toml", "[upstream]\n")
    cfg = load_config(cwd=repo)
    with pytest.raises(BadInput) as exc:
        parse_range(None, cfg)
    assert f"[upstream] synced in {repo / 'pins/slime.toml'}" in exc.value.message
    assert exc.value.hint is not None and "--range BASE..TIP" in exc.value.hint


def test_missing_engine_source_names_the_engine_pin_key(repo: Path) -> None:
    cfg = load_config(cwd=repo)
    with pytest.raises(BadInput) as exc:
        check_options(cfg, EngineFlags(), PlanRules(untrusted=False))
    assert exc.value.message.startswith("no engine source: neither --source PATH nor [engine] pin in ")
    write(repo / "pins/e.toml", "[engine]\n")
    write(repo / CONFIG_NAME, '[engine]\npin = "pins/e.toml"\n')
    with pytest.raises(BadInput) as exc:
        check_options(load_config(cwd=repo), EngineFlags(), PlanRules(untrusted=False))
    assert f"[engine] source in {repo / 'pins/e.toml'}" in exc.value.message
