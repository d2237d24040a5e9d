"""The demo before its sync (tests only): ``build_demo`` carries the sync branch itself; for
``vimesync sync`` to make it, the branch and its worktree are removed again, leaving the checkout
on main at the pre-sync baseline (the upstream and the engine as built)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import cli
from vimesync import git
from vimesync.demo.build import Demo, build_demo

# The demo has no GitHub CI, no images and no recorded test suites.
OFFLINE = ("--skip-gate", "ci", "--skip-gate", "images", "--skip-gate", "tests")


def presync_demo(root: Path) -> Demo:
    d = build_demo(root)
    git.run(d.checkout, ["worktree", "remove", "--force", str(d.downstream)])
    git.run(d.checkout, ["branch", "-q", "-D", f"sync/{d.tip[:8]}"])
    return d


def sync_json(capsys: pytest.CaptureFixture[str], cwd: Path, *args: str) -> tuple[int, dict, str]:
    """``vimesync sync --json ARGS`` run in ``cwd``: exit code, document, stderr."""
    code, out, err = cli(capsys, "sync", "--json", *args, cwd=cwd)
    return code, json.loads(out), err
