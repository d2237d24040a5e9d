"""The embedded example is reproducible, and the repo's own pins describe it exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vimesync import git
from vimesync.config import load_config
from vimesync.demo.build import Demo, build_demo
from vimesync.errors import VimesyncError

pytestmark = pytest.mark.slow  # builds the embedded example's repositories

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


def test_engine_commit_is_the_pinned_sha(demo: Demo) -> None:
    cfg = load_config(demo.downstream / "vimesync.toml")
    assert demo.engine_rev == cfg.engine.rev
    assert git.resolve(demo.engine, cfg.engine.rev) == demo.engine_rev
    assert cfg.engine.source == demo.engine


def test_upstream_pin_records_the_range_base_then_the_carried_tip(demo: Demo) -> None:
    before = load_config(demo.checkout / "vimesync.toml")
    assert before.upstream_pin.synced == demo.base
    cfg = load_config(demo.downstream / "vimesync.toml")
    assert cfg.upstream_pin.synced == demo.tip  # vimesync carry bumped it on the sync branch
    assert cfg.upstream_path == demo.upstream
    assert git.is_ancestor(demo.upstream, demo.base, demo.tip)


def test_build_is_deterministic(demo: Demo, tmp_path: Path) -> None:
    again = build_demo(tmp_path / "again")
    assert (again.base, again.tip, again.engine_rev, again.baseline, again.head) == (
        demo.base,
        demo.tip,
        demo.engine_rev,
        demo.baseline,
        demo.head,
    )


def test_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(VimesyncError, match="not empty"):
        build_demo(tmp_path)
    assert (tmp_path / "x").read_text() == "keep me"


def test_repo_layout_is_the_shipped_example() -> None:
    # patches/, pins/ and sop/ at the repo root are the package's demo data, not copies of it.
    for name in ("patches", "pins", "sop"):
        assert (REPO / name).resolve() == (REPO / "vimesync/demo/data" / name).resolve()


def test_the_sync_closes_the_loop(demo: Demo) -> None:
    # Before the sync the walk finds work to carry; after it (the sync commit's Upstream-PR
    # trailers) everything applicable is mirrored, so the next walk has nothing left to carry.
    from tests.builders.workspaces import workspace
    from vimesync.app.upstreamsteps import walk
    from vimesync.upstream.model import APPLICABLE, MIRRORED

    cfg = load_config(demo.downstream / "vimesync.toml")
    ws = workspace(cfg, downstream=cfg.downstream_path, range_=f"{demo.base}..{demo.tip}")
    before = walk(ws, at=demo.baseline)
    after = walk(ws, at=demo.head)
    assert len(before.by_status(APPLICABLE)) == 7 and len(before.by_status(MIRRORED)) == 1
    assert after.by_status(APPLICABLE) == [] and len(after.by_status(MIRRORED)) == 8


def test_the_demo_runs_in_an_untrusted_ci_session(tmp_path: Path) -> None:
    """On a CI runner (CI=true: untrusted mode) the demo still runs whole: every location it built
    is passed as a flag would pass it, not read from the config it wrote into its checkout."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(root), "VIMESYNC_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run(
        [sys.executable, "-m", "vimesync", "demo", "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # classified, carried, patches, audit held; tests and ci off (the demo runs no suites, reads no CI)
    states = [g["state"] for g in doc["gates"]]
    assert doc["gates_ok"] and states == ["held", "held", "held", "held", "off", "off"]
