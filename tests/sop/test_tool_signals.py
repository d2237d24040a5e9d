"""Ctrl-C or SIGTERM while ``sop regress`` or ``sop record precommit`` runs the repository's code:
a real signal to a real ``vimesync`` process whose test (or hook) sleeps with a child of its own.
The command says so in one line and exits 128 + the signal; the temporary worktree and the
scratch folder are gone, and so is every process the tool started (its whole group)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import vimesync
from tests.builders.gitrepo import Repo
from vimesync.demo.build import build_demo

pytestmark = pytest.mark.slow  # real processes, signalled mid-run

ROOT = Path(vimesync.__file__).resolve().parent.parent
SLEEPING_TEST = """\
import os
import subprocess
import time


def test_sleeps():
    child = subprocess.Popen(["sleep", "300"])
    escaped = subprocess.Popen(["sleep", "300"], start_new_session=True)  # out of our group
    pids = os.environ["VS_PIDS"]
    with open(pids + ".tmp", "w") as fh:
        fh.write(f"{os.getpid()} {child.pid} {escaped.pid}\\n")
    os.rename(pids + ".tmp", pids)
    time.sleep(300)
"""
SLEEPING_HOOK = """\
repos:
- repo: local
  hooks:
  - id: sleeps
    name: sleeps
    entry: >-
      sh -c 'sleep 300 & c=$!; setsid sleep 300 & echo "$$ $c $!" > "$VS_PIDS.tmp";
      mv "$VS_PIDS.tmp" "$VS_PIDS"; wait' --
    language: system
    require_serial: true
"""


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (an orphan the container's init never reaps)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# a test that leaves a sleeper in a session of its own (fork, setsid, fork), then passes or hangs
ESCAPING_TEST = """\
import os
import time


def test_escapes():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.environ["VS_PIDS"], "a") as fh:
                fh.write(f"{os.getpid()}\\n")
            time.sleep(300)
        os._exit(0)
    os.wait()
    time.sleep(HANG)
"""


def _worktrees(repo: Path) -> int:
    out = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.count("worktree ")


def _signal_mid_run(
    tmp_path: Path, repo: Path, argv: list[str], sig: signal.Signals
) -> tuple[subprocess.Popen[str], str, str]:
    """Run ``vimesync argv`` in ``repo``; once its tool is asleep in our worktree, signal it."""
    pids = tmp_path / "pids"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TMPDIR": str(scratch),
        "VS_PIDS": str(pids),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "vimesync", *argv],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worktrees = _worktrees(repo)
    try:
        for _ in range(1200):  # until the sleeping test (or hook) started, in our worktree
            if pids.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None and pids.exists(), proc.communicate()
        assert _worktrees(repo) == worktrees + 1  # ours, at the commit it runs
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _worktrees(repo) == worktrees  # the temporary worktree is gone
    return proc, out, err


def _check_cleaned(tmp_path: Path, proc: subprocess.Popen[str], err: str, code: int) -> None:
    assert proc.returncode == code, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert list((tmp_path / "tmp").iterdir()) == []  # and the scratch folder holding it
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 3
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    # the tool's group was killed, and the sleeper that left it (setsid) too
    assert [p for p in pids if _alive(p)] == []


@pytest.mark.parametrize(
    ("sig", "code", "line"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_during_regress_cleans_up(tmp_path: Path, sig: signal.Signals, code: int, line: str) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("a test that sleeps", {"tests/test_sleep.py": SLEEPING_TEST})
    repo.commit("the fix", {"README": "fixed\n"})
    argv = ["sop", "regress", "--sync", "fix", "--before", "HEAD~1", "--test", "tests/test_sleep.py"]
    argv.append("--json")
    proc, out, err = _signal_mid_run(tmp_path, repo.path, argv, sig)
    _check_cleaned(tmp_path, proc, err, code)
    assert err.strip() == f"error: {line}"
    assert line in json.dumps(json.loads(out))  # one JSON document, nothing around it
    assert not (repo.path / "sop").exists()  # nothing recorded


@pytest.mark.parametrize(
    ("sig", "code", "line"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_during_record_precommit_cleans_up(
    tmp_path: Path, sig: signal.Signals, code: int, line: str
) -> None:
    """The hook's child in its group and the daemon it left in a session of its own both die;
    with ``--json`` the one line comes with one JSON document on stdout."""
    demo = build_demo(tmp_path / "d")
    repo = Repo.__new__(Repo)  # the demo's sync worktree as it is
    repo.path = demo.downstream
    repo.commit("a hook that sleeps", {".pre-commit-config.yaml": SLEEPING_HOOK})
    argv = ["sop", "record", "precommit", "--json"]
    proc, out, err = _signal_mid_run(tmp_path, demo.downstream, argv, sig)
    _check_cleaned(tmp_path, proc, err, code)
    assert err.strip() == f"error: {line}"
    doc = json.loads(out)  # one document, nothing around it
    assert isinstance(doc, dict) and line in json.dumps(doc)
    assert not (demo.downstream / "sop/records").exists()


# a hook that leaves a sleeper in a session of its own, then hangs past the timeout
ESCAPING_HOOK = """repos:
- repo: local
  hooks:
  - id: escapes
    name: escapes
    entry: >-
      sh -c 'setsid sleep 300 & echo "$!" > "$VS_PIDS"; sleep 300 & echo "$!" >> "$VS_PIDS"; wait' --
    language: system
    require_serial: true
"""


def test_what_a_hook_left_outside_its_group_ends_at_the_precommit_timeout(tmp_path: Path) -> None:
    demo = build_demo(tmp_path / "d")
    repo = Repo.__new__(Repo)
    repo.path = demo.downstream
    repo.commit("a hook that escapes and hangs", {".pre-commit-config.yaml": ESCAPING_HOOK})
    pids = tmp_path / "pids"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "VS_PIDS": str(pids),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    started = time.monotonic()  # 30 s: pre-commit reaches the hook in time on a loaded machine
    done = subprocess.run(
        [sys.executable, "-m", "vimesync", "sop", "record", "precommit", "--timeout", "30"],
        cwd=demo.downstream,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and time.monotonic() - started < 90, done.stderr
    assert (
        done.stderr.strip()
        == "error: pre-commit stopped: it took more than 30 s (--timeout 30); nothing recorded"
    )
    found = [int(p) for p in pids.read_text().split()]
    assert len(found) == 2
    assert [p for p in found if _alive(p)] == []  # at once: nothing to wait for
    assert not (demo.downstream / "sop/records").exists()


@pytest.mark.parametrize(("hang", "code"), [(0, 0), (300, 1)])
def test_what_a_test_left_outside_its_group_ends_with_regress(tmp_path: Path, hang: int, code: int) -> None:
    """Normal end and timeout: the sleepers a real test left in sessions of their own (one per
    side) are gone once ``vimesync sop regress`` has returned."""
    repo = Repo(tmp_path / "r")
    repo.commit("a test that escapes", {"tests/test_escape.py": ESCAPING_TEST.replace("HANG", str(hang))})
    repo.commit("the fix", {"README": "fixed\n"})
    pids = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VS_PIDS": str(pids)}
    argv = ["sop", "regress", "--sync", "fix", "--before", "HEAD~1", "--test", "tests/test_escape.py"]
    done = subprocess.run(
        [sys.executable, "-m", "vimesync", *argv, "--timeout", "10"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    if code:
        assert "stopped: it took more than 10 s" in done.stderr
    found = [int(p) for p in pids.read_text().split()]
    assert len(found) == (1 if hang else 2)  # a timeout stops at the "before" side
    assert [p for p in found if _alive(p)] == []  # at once: nothing to wait for
