"""What the job sets reaches an engine check through the workspace, read once and only when
used: the cache folder for every check, the pip timeout only for a pin that runs pip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.workspaces import workspace
from vimesync.check.flags import EngineFlags
from vimesync.config import Config, EnginePin
from vimesync.errors import BadInput
from vimesync.settings import PIP_TIMEOUT


def _config(tmp_path: Path, **pin: object) -> Config:
    (tmp_path / "patches").mkdir(exist_ok=True)
    engine = EnginePin(name="eng", series=tmp_path / "patches", **pin)  # type: ignore[arg-type]
    return Config(engines=(engine,))


def test_the_cache_folder_reaches_the_check_and_a_bad_pip_timeout_stops_only_pip(tmp_path: Path) -> None:
    environ = {"VIMESYNC_CACHE_DIR": str(tmp_path / "cache"), "VIMESYNC_PIP_TIMEOUT": "soon"}
    ws = workspace(_config(tmp_path, source=tmp_path / "src"), environ=environ)
    (opts,) = ws.engine_plan(EngineFlags())
    assert (opts.cache_dir, opts.pip_timeout) == (tmp_path / "cache", PIP_TIMEOUT)
    ws = workspace(_config(tmp_path, package="eng==1.0", sha256="0" * 64), environ=environ)
    with pytest.raises(BadInput, match="VIMESYNC_PIP_TIMEOUT must be a positive number") as exc:
        ws.engine_plan(EngineFlags())
    assert "soon" not in exc.value.message


def test_a_pip_timeout_the_job_sets_reaches_the_download(tmp_path: Path) -> None:
    environ = {"VIMESYNC_CACHE_DIR": str(tmp_path / "cache"), "VIMESYNC_PIP_TIMEOUT": "30"}
    ws = workspace(_config(tmp_path, package="eng==1.0", sha256="0" * 64), environ=environ)
    assert ws.engine_plan_one(EngineFlags()).pip_timeout == 30.0
