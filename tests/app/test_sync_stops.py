"""``vimesync sync`` stopping where a human must decide, then going on (issue 22): a patch that
no longer applies at its pin (refresh it on the sync branch, ``--continue``), exact-head CI
pending on a loopback GitHub (``--continue`` reads it again once green, and publishes the report
into the pull request)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import fakegithub
from tests.builders.fakegithub import TOKEN, FakeGitHub
from tests.builders.pair import cli, tree
from tests.builders.syncdemo import OFFLINE, presync_demo, sync_json
from vimesync import git
from vimesync.report.publish import END, START

pytestmark = pytest.mark.slow  # real demo repositories, a carry and a report per test

STEPS = ["walk", "carry", "patches", "audit", "status", "report"]
PATCH = "patches/vllm-score-centering.patch"
CONTEXT = '        top_p=body.get("top_p", 1.0),\n'


def _commit(repo: Path, message: str) -> str:
    git.run(repo, ["-c", "user.name=M", "-c", "user.email=m@x", "commit", "-qam", message])
    return git.resolve(repo, "HEAD")


def test_a_patch_that_fails_at_its_pin_stops_the_sync_until_it_is_fixed(tmp_path: Path, capsys) -> None:
    d = presync_demo(tmp_path / "d")
    good = (d.checkout / PATCH).read_text()
    assert good.count(CONTEXT) == 1
    # The maintainer's stack drifted before the sync: one context line the pin does not have.
    (d.checkout / PATCH).write_text(good.replace(CONTEXT, CONTEXT.replace("1.0", "0.9")))
    _commit(d.checkout, "patches: a context line the pin does not have")

    code, doc, err = sync_json(capsys, d.checkout, *OFFLINE)
    assert code == 1, (doc, err)
    assert [s["name"] for s in doc["steps"]] == STEPS[:3] and doc["stopped"] == "patches"
    figure = doc["steps"][2]["figure"]
    # The patch after it was not tried: only the one that fails is named.
    assert figure == "2 apply, 1 not tried after a failure, not parsed; failing: vllm-score-centering.patch"
    assert doc["decision"] == "the patch stack does not hold at its pin (vllm-score-centering.patch)"
    assert doc["next"].startswith(f"in {doc['worktree']}: vimesync pin bump --refresh")
    assert doc["next"].endswith("then vimesync sync --continue")
    # Continuing with nothing changed stops at the same place and carries nothing again.
    branch_tip = git.resolve(d.checkout, doc["branch"])
    code, again, _ = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 1 and again["stopped"] == "patches"
    assert [(s["name"], s["reused"]) for s in again["steps"]] == [
        ("walk", True),
        ("carry", True),
        ("patches", False),
    ]
    assert git.resolve(d.checkout, doc["branch"]) == branch_tip

    # The fix is a commit on the sync branch: the gates judged at the head run again there.
    worktree = Path(doc["worktree"])
    (worktree / PATCH).write_text(good)
    fixed = _commit(worktree, "patches: refresh vllm-score-centering for the pin")
    code, doc, _ = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    # The refreshed patch is the sync's own change: the audit asks for its review.
    assert code == 1 and doc["stopped"] == "audit", doc
    assert doc["steps"][2] == {**doc["steps"][2], "name": "patches", "ok": True, "reused": False}
    assert doc["decision"] == f"1 path needs review (1 unreviewed, 0 stale): {PATCH}"
    review = doc["next"].split(": ", 1)[1].split(", then ")[0].replace("NAME", "maintainer").split()
    assert review[:3] == ["vimesync", "audit", "review"], doc["next"]
    code, _, err = cli(capsys, *review[1:], cwd=worktree)
    assert code == 0, err
    code, done, err = sync_json(capsys, d.checkout, "--continue", *OFFLINE)
    assert code == 0, (done, err)
    reused = ("walk", "carry", "patches")  # the review did not move the head
    assert [(s["name"], s["reused"]) for s in done["steps"]] == [(n, n in reused) for n in STEPS]
    assert done["steps"][2]["figure"] == "4 apply, 14 files parse"
    assert git.resolve(d.checkout, done["branch"]) == fixed
    report = Path(done["report"]).read_text()
    assert f"Final commit: {fixed}." in report


class _Heads(dict):
    """The pull request's head is whatever the sync branch points at when GitHub is asked."""

    def __init__(self, repo: Path, branch: str) -> None:
        super().__init__()
        self.repo, self.branch = repo, branch

    def get(self, key: Any, default: Any = None) -> Any:
        return git.resolve(self.repo, f"refs/heads/{self.branch}")


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(range(1, 2))
    fake.bodies[7] = "Written by a human."
    with fakegithub.serve(fake) as api:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", api)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def _status(state: str) -> dict[str, str]:
    url = "https://buildkite.com/vime-org/vime/builds/1445"
    return {"context": "buildkite/vime", "state": state, "description": "", "target_url": url}


def test_exact_head_ci_pending_stops_the_sync_and_continue_publishes_once_green(
    github: FakeGitHub, tmp_path: Path, capsys
) -> None:
    d = presync_demo(tmp_path / "d")
    github.heads = _Heads(d.checkout, f"sync/{d.tip[:8]}")
    offline = ("--skip-gate", "images", "--skip-gate", "tests")
    target = "vime-org/vime#7"

    code, doc, err = sync_json(capsys, d.checkout, *offline, "--publish", target)
    assert code == 1, (doc, err)
    head = git.resolve(d.checkout, doc["branch"])
    assert doc["stopped"] == "status" and [s["name"] for s in doc["steps"]] == STEPS[:5]
    assert doc["decision"].startswith("exact-head CI: "), doc["decision"]
    assert doc["next"].startswith("re-run later: vimesync sync --continue reads it again")
    assert github.bodies[7] == "Written by a human."  # nothing published while a gate is open
    asked = [p for p, _ in github.requests if p.endswith(f"/commits/{head}/status")]
    assert asked, "the CI of the sync head was read"

    # Still running: --continue reads it again and stops at the same decision.
    github.statuses[head] = [_status("pending")]
    code, doc, _ = sync_json(capsys, d.checkout, "--continue")
    assert code == 1 and doc["stopped"] == "status" and "pending" in doc["decision"], doc["decision"]
    assert [(s["name"], s["reused"]) for s in doc["steps"]] == [(n, n != "status") for n in STEPS[:5]]

    # Green at the exact head: the status gate holds, the report is written and published.
    github.statuses[head] = [_status("success")]
    code, doc, err = sync_json(capsys, d.checkout, "--continue")
    assert code == 0, (doc, err)
    assert [(s["name"], s["reused"]) for s in doc["steps"]] == [(n, n in STEPS[:4]) for n in STEPS]
    url = "https://github.com/vime-org/vime/pull/7"
    assert doc["steps"][-1]["figure"].endswith(f", published to {url}")
    assert f"published: {url}" in doc["notes"]
    body = github.bodies[7]
    assert body is not None and body.startswith("Written by a human.")
    assert body.count(START) == 1 and body.count(END) == 1
    assert f"Final commit: {head}." in body
    assert body.split(START)[1].split(END)[0].strip() == Path(doc["report"]).read_text().strip()
    patched = len(github.patches)

    # A second sync: up to date, and the description is not written again.
    code, out, _ = cli(capsys, "sync", cwd=d.checkout)
    assert code == 0 and "up to date" in out, out
    assert len(github.patches) == patched


def test_continue_reads_ci_where_the_sync_started_reading_it(
    github: FakeGitHub, tmp_path: Path, capsys
) -> None:
    """--ci-repo and --ci-pr are kept with the sync, as --skip-gate and --publish are: a
    --continue without them reads the same repository's CI, and given anew they replace it."""
    d = presync_demo(tmp_path / "d")
    github.heads = _Heads(d.checkout, f"sync/{d.tip[:8]}")
    offline = ("--skip-gate", "images", "--skip-gate", "tests")
    code, doc, err = sync_json(capsys, d.checkout, *offline, "--ci-repo", "other-org/vime", "--ci-pr", "7")
    assert code == 1 and doc["stopped"] == "status", (doc, err)
    head = git.resolve(d.checkout, doc["branch"])

    def asked(repo: str) -> int:
        return sum(1 for p, _ in github.requests if p.endswith(f"/repos/{repo}/commits/{head}/status"))

    first = asked("other-org/vime")
    assert first, github.requests
    github.statuses[head] = [_status("pending")]
    code, doc, _ = sync_json(capsys, d.checkout, "--continue")
    assert code == 1 and doc["stopped"] == "status" and asked("other-org/vime") > first
    code, doc, _ = sync_json(capsys, d.checkout, "--continue", "--ci-repo", "third-org/vime")
    assert code == 1 and asked("third-org/vime"), github.requests


_KILL_AT_PROCESS = """
import os, signal, subprocess, sys
sys.path.insert(0, {root!r})
from vimesync.cli.app import main
kill_at, started = {kill_at!r}, [0]
real = subprocess.Popen.__init__
def init(self, *args, **kwargs):
    started[0] += 1
    if started[0] == kill_at:
        os.kill(os.getpid(), signal.SIGTERM)
    real(self, *args, **kwargs)
subprocess.Popen.__init__ = init
try:
    os.chdir({cwd!r})
    main({argv!r})
finally:
    print("processes started:", started[0], file=sys.stderr)
"""


def _sync_killed_at(checkout: Path, kill_at: int) -> tuple[int, str]:
    root = str(Path(__file__).resolve().parents[2])
    script = _KILL_AT_PROCESS.format(root=root, cwd=str(checkout), argv=["sync", *OFFLINE], kill_at=kill_at)
    env = {**os.environ, "PYTHONPATH": root}
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    started = re.search(r"processes started: (\d+)", proc.stderr)
    assert started, proc.stderr
    return proc.returncode, proc.stderr


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], int]:
    """The branch a sync never killed makes, and how many child processes that sync starts."""
    ref = presync_demo(tmp_path_factory.mktemp("ref"))
    code, stderr = _sync_killed_at(ref.checkout, 0)
    assert code == 0, stderr
    total = int(stderr.rsplit("processes started: ", 1)[1].split()[0])
    return tree(ref.checkout, f"sync/{ref.tip[:8]}"), total


@pytest.mark.parametrize("point", [0, 1, 3, 5, 7, 9, 11, 13])
def test_a_sync_killed_before_any_child_process_resumes_to_the_same_branch(
    tmp_path: Path, capsys, uninterrupted: tuple[dict[str, str], int], point: int
) -> None:
    """SIGTERM at the start of the n-th child process (git, the parse workers...): whatever was
    half done, ``--continue`` (or a new ``sync`` when the kill came before its state was written)
    ends with the branch an uninterrupted sync makes. The points are spread over the whole run:
    a fraction ``point/14`` of the processes one sync starts (0: the first)."""
    ref_tree, total = uninterrupted
    d = presync_demo(tmp_path / "d")
    branch = f"sync/{d.tip[:8]}"
    kill_at = max(1, total * point // 14)
    code, stderr = _sync_killed_at(d.checkout, kill_at)
    assert code == 128 + 15, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("processes started")]
    # one line: "terminated" before the sync's state exists, else how to resume
    assert len(lines) == 1 and ("interrupted: " in lines[0] or lines[0] == "error: terminated"), stderr
    code, status, _ = sync_json(capsys, d.checkout, "--status")
    resume = ("--continue",) if status["in_progress"] else OFFLINE
    code, doc, err = sync_json(capsys, d.checkout, *resume)
    assert code == 0, (kill_at, total, doc, err)
    assert doc["branch"] == branch and tree(d.checkout, branch) == ref_tree
    code, out, _ = cli(capsys, "sync", *OFFLINE, cwd=d.checkout)
    assert code == 0 and "up to date" in out, out


def test_a_sync_with_no_ci_asked_for_stops_without_a_stutter(tmp_path: Path, capsys) -> None:
    # Issue 29 item 17: "exact-head CI: Exact-head CI was not asked for".
    d = presync_demo(tmp_path / "d")
    code, doc, err = sync_json(capsys, d.checkout, "--skip-gate", "images", "--skip-gate", "tests")
    assert code == 1, (doc, err)
    assert doc["stopped"] == "status"
    assert doc["decision"].startswith("exact-head CI was not asked for"), doc["decision"]
    assert doc["decision"].lower().count("exact-head ci") == 1
