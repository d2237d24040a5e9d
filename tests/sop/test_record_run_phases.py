"""SIGINT after the job has ended (issue 31): while ``sop record run -- CMD`` reads the JUnit file or
the figures the job wrote, and while it writes the record. A real ``vimesync`` process, the signal
sent to itself at that phase by a ``sitecustomize`` of the test's (the phase is milliseconds long:
a signal from outside could not be timed into it). One line, exit 130, no temporary worktree left,
and the records file as it was: the old content byte for byte, no temporary file beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vimesync
from vimesync.demo.build import Demo

pytestmark = pytest.mark.slow  # real processes, signalled mid-phase

ROOT = Path(vimesync.__file__).resolve().parent.parent
PY = sys.executable

# Imported by the vimesync process at start-up (its folder first on PYTHONPATH): at the phase
# VS_PHASE names it sends itself SIGINT, as a Ctrl-C arriving there would.
HOOK = """\
import os
import signal
import time

PHASE = os.environ.get("VS_PHASE", "")


def _interrupt():
    open(os.environ["VS_MARK"], "w").write(PHASE)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)  # the handler raises KeyboardInterrupt before this ends
    raise AssertionError("not interrupted")


if PHASE in ("junit", "figures"):
    import vimesync.sop.jobfigures as jf

    name = "read_job_junit" if PHASE == "junit" else "read_job_figures"
    real = getattr(jf, name)

    def hooked(*args, **kw):
        real(*args, **kw)  # the file read as usual, then the signal
        _interrupt()

    setattr(jf, name, hooked)
elif PHASE == "write":
    import vimesync.safefs.writes as writes

    class _Os:
        # the records file's new content is in its temporary file, not yet renamed over it
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def fsync(fd):
            os.fsync(fd)
            _interrupt()

    writes.os = _Os()
"""


def _records(demo: Demo) -> Path:
    (path,) = sorted((demo.downstream / "sop/records").glob("*.toml"))
    return path


def _worktrees(repo: Path) -> int:
    out = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.count("worktree ")


def _vimesync(demo: Demo, tmp_path: Path, phase: str, *args: str) -> subprocess.CompletedProcess[str]:
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(HOOK)
    drop = ("CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPATH=f"{hooks}{os.pathsep}{ROOT}", VS_PHASE=phase, VS_MARK=str(tmp_path / "mark"))
    return subprocess.run(
        [PY, "-m", "vimesync", "sop", "record", "run", *args],
        cwd=demo.downstream,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


JUNIT = '<testsuite><testcase classname="t" name="a"/></testsuite>'


@pytest.mark.parametrize("phase", ["junit", "figures", "write"])
@pytest.mark.parametrize("as_json", [False, True])
def test_sigint_after_the_job_ended_records_nothing_and_leaves_the_file_whole(
    demo: Demo, tmp_path: Path, phase: str, as_json: bool
) -> None:
    first = _vimesync(demo, tmp_path, "", "--name", "job", "--", "true")
    assert first.returncode == 0, first.stderr
    records = _records(demo)
    before = records.read_bytes()
    worktrees = _worktrees(demo.downstream)
    xml, figures = tmp_path / "out.xml", tmp_path / "figures.json"
    job = f"open({str(xml)!r}, 'w').write({JUNIT!r}); open({str(figures)!r}, 'w').write('{{\"fd\": 1614}}')"
    flags = ["--json"] if as_json else []
    args = ["--name", "job", "--again", "--in-worktree", "--junit", str(xml), "--figures", str(figures)]
    done = _vimesync(demo, tmp_path, phase, *args, *flags, "--", PY, "-c", job)
    assert (tmp_path / "mark").read_text() == phase  # interrupted there, not before
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip() == "error: interrupted" and "Traceback" not in done.stderr
    if as_json:
        doc = json.loads(done.stdout)  # one document, nothing around it
        assert doc["ok"] is False and doc["exit_code"] == 130
    else:
        assert done.stdout == ""
    assert records.read_bytes() == before  # the old content, not a torn or half-new one
    assert sorted(p.name for p in records.parent.iterdir()) == [records.name]  # no temporary file
    assert _worktrees(demo.downstream) == worktrees  # the job's temporary worktree is gone
