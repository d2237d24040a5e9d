"""``vimesync sync`` on the demo (issue 22): every step in one run, a stop at a gate and
``--continue``, ``--status``, a second run that is up to date, and a sync killed between two
steps that resumes without redoing a finished one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders.pair import cli, tree
from tests.builders.syncdemo import OFFLINE, presync_demo, sync_json
from vimesync import git

pytestmark = pytest.mark.slow  # real demo repositories, a carry and a report per test

ROOT = str(Path(__file__).resolve().parents[2])
STEPS = ["walk", "carry", "patches", "audit", "status", "report"]


def test_sync_runs_every_step_then_a_second_run_is_up_to_date(tmp_path: Path, capsys) -> None:
    d = presync_demo(tmp_path / "d")
    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 0, (doc, err)
    assert tuple(doc)[:3] == ("kind", "ok", "exit_code") and doc["kind"] == "sync" and doc["ok"] is True
    assert [s["name"] for s in doc["steps"]] == STEPS
    assert [s["kind"] for s in doc["steps"]] == [
        "walk",
        "carry",
        "patches-check",
        "audit",
        "sop-status",
        "report",
    ]
    figures = {s["name"]: s["figure"] for s in doc["steps"]}
    assert figures["walk"] == "9 PRs (7 applicable, 1 excluded, 1 mirrored), 1 direct commit"
    # The policy-excluded PR is excluded, not skipped (only --skip skips).
    assert figures["carry"] == (
        f"7 carried onto sync/{d.tip[:8]}, 1 excluded, 1 already downstream, 1 direct (not carried)"
    )
    assert figures["patches"] == "4 apply, 14 files parse"
    assert figures["audit"] == "10 changed paths, all reviewed or verified"
    assert figures["status"] == "every gate holds (4 held, 3 off)"
    assert doc["stopped"] is None and doc["next"] is None and doc["branch"] == f"sync/{d.tip[:8]}"
    report = Path(doc["report"])
    assert report == d.checkout / ".vimesync" / "sync-report.md" and "## Summary" in report.read_text()
    # The branch is the one `vimesync carry` makes on its own.
    assert Path(doc["worktree"]) == d.downstream
    state = git.git_dir(d.checkout) / "vimesync-sync.json"
    before = (state.read_bytes(), report.read_bytes(), git.resolve(d.checkout, doc["branch"]))
    code, out, _ = cli(capsys, "sync", *OFFLINE, cwd=d.checkout)
    assert code == 0 and "up to date" in out, out
    assert "walk: 0 PRs" in out and "status: every gate holds" in out
    assert (state.read_bytes(), report.read_bytes(), git.resolve(d.checkout, doc["branch"])) == before
    code, again, _ = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 0 and again["status"] == "up to date"


def test_sync_stops_at_a_gate_and_continue_redoes_no_finished_step(tmp_path: Path, capsys) -> None:
    d = presync_demo(tmp_path / "d")
    # the tests gate (no suite required) off: the CI gate is the first a human must wait for
    code, out, _ = cli(capsys, "sync", "--skip-gate", "tests", cwd=d.checkout)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("walk: 9 PRs") and lines[1].startswith("carry: 7 carried onto sync/")
    assert "stopped at status: exact-head CI" in out and "next: re-run later: vimesync sync --continue" in out
    code, status, _ = sync_json(capsys, d.checkout, "--status")
    assert code == 0 and status["in_progress"] is True and status["next_step"] == "status"
    assert [s["name"] for s in status["steps"]] == STEPS[:5] and status["steps"][4]["ok"] is False
    # A new sync is refused while one is in progress; --continue refuses carry's options.
    code, _, err = cli(capsys, "sync", cwd=d.checkout)
    assert code == 2 and "in progress" in err
    code, _, err = cli(capsys, "sync", "--continue", "--squash", cwd=d.checkout)
    assert code == 2 and "--squash: not used by --continue" in err
    # From the sync worktree too: the state is in the common git dir.
    code, doc, err = sync_json(capsys, d.downstream, "--continue", *OFFLINE)
    assert code == 0, (doc, err)
    assert [(s["name"], s["reused"]) for s in doc["steps"]] == [(n, n in STEPS[:4]) for n in STEPS]


_KILL_AFTER_CARRY = """
import os, signal, sys
sys.path.insert(0, {root!r})
from vimesync.app import syncstate
from vimesync.cli.app import main
real = syncstate.save
def save(repo, state):
    real(repo, state)
    if state.done("carry") is not None:
        os.kill(os.getpid(), signal.SIGTERM)
syncstate.save = save
os.chdir({cwd!r})
main({argv!r})
"""


def test_a_sync_killed_between_two_steps_resumes_with_continue(tmp_path: Path, capsys) -> None:
    ref = presync_demo(tmp_path / "ref")
    code, ref_doc, _ = sync_json(capsys, ref.checkout, *OFFLINE)
    assert code == 0
    d = presync_demo(tmp_path / "d")
    argv = ["sync", *OFFLINE]
    script = _KILL_AFTER_CARRY.format(root=ROOT, cwd=str(d.checkout), argv=argv)
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "interrupted: `vimesync sync --continue` resumes" in proc.stderr
    code, doc, err = sync_json(capsys, d.checkout, "--continue")
    assert code == 0, (doc, err)
    assert [(s["name"], s["reused"]) for s in doc["steps"]] == [(n, n in ("walk", "carry")) for n in STEPS]
    assert tree(d.checkout, doc["branch"]) == tree(ref.checkout, ref_doc["branch"])


def test_a_branch_of_that_name_already_there_is_refused_with_a_way_on(tmp_path: Path, capsys) -> None:
    """A sync/<tip> branch an earlier, aborted sync left: the sync stops before its carry and says
    how to go on (--continue cannot take a new --branch, so carry's own hint would not do)."""
    d = presync_demo(tmp_path / "d")
    branch = f"sync/{d.tip[:8]}"
    git.run(d.checkout, ["branch", branch, "HEAD"])
    code, _, err = cli(capsys, "sync", *OFFLINE, cwd=d.checkout)
    assert code == 2 and f"branch {branch} already exists" in err
    assert f"git branch -D {branch}, then vimesync sync --continue" in err
    git.run(d.checkout, ["branch", "-D", branch])
    code, doc, err = sync_json(capsys, d.checkout, "--continue")
    assert doc["branch"] == branch and [s["name"] for s in doc["steps"]][:2] == ["walk", "carry"], (doc, err)


def test_continue_goes_on_with_the_range_upstream_and_carry_flags_it_started_with(
    tmp_path: Path, capsys
) -> None:
    """A sync stopped between its walk and its carry: --continue takes none of --range,
    --upstream, --direct, --pr, --squash, --worktree, --branch anew, so the state keeps them. It
    once started the carry with carry's defaults (direct commits left out) and walked the
    config's upstream."""
    d = presync_demo(tmp_path / "d")
    moved = tmp_path / "elsewhere" / "slime"
    moved.parent.mkdir()
    (tmp_path / "d" / "slime").rename(moved)  # the config's [upstream] path leads nowhere now
    base = git.run(d.checkout, ["show", "HEAD:pins/slime.toml"]).decode().split('synced = "')[1][:40]
    branch, worktree = "sync/mine", tmp_path / "d" / "wt"  # beside the checkout: ../ paths hold
    git.run(d.checkout, ["branch", branch, "HEAD"])  # stops the sync after its walk (exit 2)
    started = ("--upstream", str(moved), "--range", f"{base}..{d.tip}", "--direct", "include")
    code, _, err = cli(
        capsys, "sync", *OFFLINE, *started, "--branch", branch, "--worktree", str(worktree), cwd=d.checkout
    )
    assert code == 2 and f"branch {branch} already exists" in err, err
    git.run(d.checkout, ["branch", "-D", branch])
    code, doc, err = sync_json(capsys, d.checkout, "--continue")
    assert [s["name"] for s in doc["steps"]][:2] == ["walk", "carry"], (doc, err)
    assert git.run(worktree, ["rev-parse", "--abbrev-ref", "HEAD"]).decode().strip() == branch
    log = git.run(moved, ["log", "--first-parent", "--format=%s", f"{base}..{d.tip}"]).decode().splitlines()
    (direct,) = [subject for subject in log if "(#" not in subject and not subject.startswith("Merge")]
    # carried, not left out: here it meets the fork's README, so the carry stops at it
    assert doc["stopped"] == "carry" and direct in doc["decision"], doc
    # Resolved, the carry in progress goes on with its own range and upstream (the sync's state
    # holds them too, and once passed them on, which the carry refused as new flags).
    git.run(worktree, ["checkout", "--ours", "--", "README.md"])
    git.run(worktree, ["add", "README.md"])
    code, doc, err = sync_json(capsys, d.checkout, "--continue")
    assert doc["kind"] != "error", (doc, err)
    assert [(s["name"], s["ok"]) for s in doc["steps"]][:2] == [("walk", True), ("carry", True)], doc


def test_abort_forgets_the_sync(tmp_path: Path, capsys) -> None:
    d = presync_demo(tmp_path / "d")
    assert cli(capsys, "sync", cwd=d.checkout)[0] == 1
    code, doc, _ = sync_json(capsys, d.checkout, "--abort")
    assert code == 0 and doc["aborted"] is True and doc["carry"] is None  # the carry had ended
    assert not (git.git_dir(d.checkout) / "vimesync-sync.json").exists()
    code, _, err = cli(capsys, "sync", "--continue", cwd=d.checkout)
    assert code == 2 and "no sync is in progress" in err
