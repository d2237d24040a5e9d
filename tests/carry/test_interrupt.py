"""A carry stopped by SIGTERM or SIGINT through its PID (a CI runner, ``timeout``, Ctrl-C) says
so in one line (one JSON document with --json) and ``--continue`` finishes it: the branch ends
with the tree an uninterrupted carry makes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders.pair import Pair, build_pair, tree
from vimesync import git

pytestmark = pytest.mark.slow  # real carry processes, signalled mid-run

ROOT = str(Path(__file__).resolve().parents[2])
MESSAGE = "interrupted: `vimesync carry --continue` resumes"

# The carry signals itself right after `git worktree add`, before its state says so.
_AFTER_WORKTREE = """
import os, signal, sys
sys.path.insert(0, {root!r})
from vimesync.carry import gitops
from vimesync.cli.app import main
real = gitops.add_worktree
def add_worktree(*a, **k):
    real(*a, **k)
    os.kill(os.getpid(), {sig})
gitops.add_worktree = add_worktree
os.chdir({cwd!r})
main({argv!r})
"""


def _reference(tmp_path: Path, capsys) -> dict[str, tuple[int, bytes]]:
    """The tree an uninterrupted carry makes (a pair of its own: same content, so the same
    files but for the upstream shas in the pin)."""
    ref = build_pair(tmp_path / "reference")
    code, doc = ref.carry(capsys)
    assert code == 0
    return _files(ref, doc["branch"])


def _files(pair: Pair, branch: str) -> dict[str, tuple[int, bytes]]:
    got = tree(pair.down.path, branch)
    pin = got.pop("pins/slime.toml")
    assert f'synced = "{pair.tip}"'.encode() in pin[1]
    return got


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("json_out", [False, True])
def test_a_carry_signalled_after_adding_its_worktree_resumes(
    tmp_path: Path, capsys, sig: signal.Signals, json_out: bool
) -> None:
    pair = build_pair(tmp_path / "p")
    argv = ["carry", *(["--json"] if json_out else [])]
    script = _AFTER_WORKTREE.format(root=ROOT, sig=int(sig), cwd=str(pair.down.path), argv=argv)
    proc = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True
    )
    assert proc.returncode == 128 + sig, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {MESSAGE}"]
    if json_out:
        doc = json.loads(proc.stdout)
        assert doc["kind"] == "error" and doc["exit_code"] == 128 + sig and doc["error"] == MESSAGE
    else:
        assert proc.stdout == ""
    assert pair.worktree().is_dir()  # made, and the state does not know it yet
    code, doc = pair.carry(capsys, "--continue")
    assert code == 0 and doc["status"] == "done", doc
    assert _files(pair, doc["branch"]) == _reference(tmp_path, capsys)
    assert git.run(pair.worktree(), ["status", "--porcelain"]) == b""


def _interrupted_once(pair: Pair, sig: signal.Signals, delay: float) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vimesync", "carry"],
        cwd=pair.down.path,
        env={**os.environ, "PYTHONPATH": ROOT},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("seed", range(4))
def test_a_carry_signalled_at_a_random_point_resumes_to_the_same_tree(
    tmp_path: Path, capsys, seed: int
) -> None:
    rng = random.Random(seed)
    sig = (signal.SIGTERM, signal.SIGINT)[seed % 2]
    expected = _reference(tmp_path, capsys)
    pair = build_pair(tmp_path / "p")
    start = time.monotonic()
    probe = build_pair(tmp_path / "probe")
    subprocess.run(
        [sys.executable, "-m", "vimesync", "carry"],
        cwd=probe.down.path,
        env={**os.environ, "PYTHONPATH": ROOT},
        capture_output=True,
        check=True,
    )
    took = time.monotonic() - start
    done = _interrupted_once(pair, sig, rng.uniform(0.3, 1.0) * took)
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode == 0:
        branch = f"sync/{pair.tip[:8]}"  # it finished before the signal
    else:
        assert done.returncode == 128 + sig, done.stderr
        state = git.git_dir(pair.down.path) / "vimesync-carry.json"
        if state.exists():
            assert done.stderr.strip().splitlines() == [f"error: {MESSAGE}"]
            code, doc = pair.carry(capsys, "--continue")
        else:  # stopped before the carry began: nothing made, start again
            assert not pair.worktree().exists()
            code, doc = pair.carry(capsys)
        assert code == 0 and doc["status"] == "done", doc
        branch = doc["branch"]
    assert _files(pair, branch) == expected
