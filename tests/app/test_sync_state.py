"""The sync's state file is not trusted (issue 22): a value vimesync never writes is refused with
the way out, and ``--abort`` removes it still."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import build_pair, cli
from vimesync import git

GOOD = {"checkout": "/x", "onto": "a" * 40, "baseline": "a" * 40, "steps": [], "version": 1}


@pytest.mark.parametrize(
    "doc",
    [
        {**GOOD, "worktree": "relative/path"},
        {**GOOD, "branch": "--upload-pack=x"},
        {**GOOD, "onto": "HEAD"},
        {**GOOD, "steps": [{"name": "rm -rf", "ok": True, "exit_code": 0, "figure": "", "head": None}]},
        {**GOOD, "version": 2},
        [1, 2],
        {**GOOD, "extra": "a key vimesync never writes"},
        {**GOOD, "checkout": ["/x"]},
        {**GOOD, "worktree": "/x/\u001b]8;;http://e\u0007"},
        {**GOOD, "skip_gate": "ci"},
        {**GOOD, "skip_gate": ["ci"] * 21},
        {**GOOD, "publish": "a/b#1\nc"},
        {**GOOD, "ci_repo": "a/b\u001b[2J"},
        {**GOOD, "ci_repo": ["a/b"]},
        {**GOOD, "ci_pr": 0},
        {**GOOD, "ci_pr": "7"},
        {**GOOD, "range": "a..b\nc"},
        {**GOOD, "upstream": "relative/slime"},
        {**GOOD, "prs": [0]},
        {**GOOD, "prs": list(range(1, 1003))},
        {**GOOD, "direct": "--exec=x"},
        {**GOOD, "squash": "yes"},
        {**GOOD, "carry_worktree": "wt"},
        {**GOOD, "finished": "yes"},
        {**GOOD, "steps": [{"name": "walk", "ok": True, "exit_code": True, "figure": "", "head": None}]},
        {**GOOD, "steps": [{"name": "walk", "ok": True, "exit_code": 0, "figure": "a\rb", "head": None}]},
        {**GOOD, "steps": [{"name": "walk", "ok": True, "exit_code": 0, "figure": "", "head": "HEAD"}]},
    ],
)
def test_a_state_vimesync_did_not_write_is_refused_and_abort_removes_it(tmp_path: Path, capsys, doc) -> None:
    pair = build_pair(tmp_path)
    state = git.git_dir(pair.down.path) / "vimesync-sync.json"
    state.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "sync", "--continue", cwd=pair.down.path)
    assert code == 2 and "not a sync state vimesync can read" in err and "--abort" in err
    code, _, _ = cli(capsys, "sync", "--abort", cwd=pair.down.path)
    assert code == 0 and not state.exists()
