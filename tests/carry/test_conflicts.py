"""Conflicts: git's own conflict state, --status, --continue, --skip, --abort, a killed carry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders.gitrepo import IDENTITY
from tests.builders.pair import Pair, build_pair, cli, tree
from vimesync import git

pytestmark = pytest.mark.slow  # carries with conflicts in real repositories


@pytest.fixture()
def pair(tmp_path: Path) -> Pair:
    p = build_pair(tmp_path)
    p.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    return p


def test_conflict_stops_in_git_conflict_state_then_continue(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys)
    assert code == 1
    assert [c["pr"] for c in doc["carried"]] == [1]
    conflict = doc["conflict"]
    assert conflict["pr"] == 2 and conflict["title"] == "Change a and util"
    assert [f["path"] for f in conflict["files"]] == ["vime/a.py"]
    assert conflict["files"][0]["hunks"] == ["@@ -2,1 +2,1 @@"]
    wt = Path(doc["worktree"])
    stages = git.run(wt, ["ls-files", "-u"]).decode().split("\n")
    assert [line.split()[2] for line in stages if line] == ["1", "2", "3"]
    text = (wt / "vime/a.py").read_text()
    assert "<<<<<<< downstream" in text and ">>>>>>> upstream #2" in text
    assert "UU vime/a.py" in git.run(wt, ["status", "--porcelain"]).decode()
    # The clean part of the PR is staged already.
    assert (wt / "vime/util.py").read_text() == "def f():\n    return 2\n"
    # The state lives in the git dir, not the work tree; a second carry is refused.
    assert (git.git_dir(pair.down.path) / "vimesync-carry.json").is_file()
    code, _, err = cli(capsys, "carry", "--branch", "other", cwd=pair.down.path)
    assert code == 2 and "already in progress" in err
    code, out, _ = cli(capsys, "carry", "--status", cwd=wt)
    assert code == 0 and "1/3 done" in out and "vime/a.py" in out
    # --continue before resolving: exit 1, nothing moves.
    code, _, err = cli(capsys, "carry", "--continue", cwd=wt)
    assert code == 1 and "still in conflict" in err
    (wt / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('downstream')\n")
    git.run(wt, ["add", "vime/a.py"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0 and doc["status"] == "done"
    assert [c["pr"] for c in doc["carried"]] == [1, 2, 3]
    msg = git.run(wt, ["log", "-1", "--format=%B", "HEAD~2"]).decode()
    # Issue 17.11: the commit a maintainer resolved by hand says which files.
    assert msg.strip().endswith(
        f"Upstream-Commit: {doc['carried'][1]['upstream_commit']}\nCarry-Resolved: vime/a.py"
    )
    assert "Carry-Resolved" not in git.run(wt, ["log", "-1", "--format=%B", "HEAD~1"]).decode()
    got = tree(pair.down.path, doc["branch"])
    assert got["vime/a.py"][1] == b"from vime import x\nprint(2)\nprint('downstream')\n"
    assert f'synced = "{pair.tip}"'.encode() in got["pins/slime.toml"][1]
    assert git.run(wt, ["status", "--porcelain"]) == b""
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_skip_drops_the_pr_and_records_it(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys)
    assert code == 1
    code, doc = pair.carry(capsys, "--skip")
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 3]
    assert {s["pr"]: s["reason"] for s in doc["skipped"]}[2] == "skipped at a conflict (--skip)"
    wt = Path(doc["worktree"])
    assert git.run(wt, ["status", "--porcelain"]) == b""
    assert (wt / "vime/a.py").read_text() == "from vime import x\nprint(1)\nprint('downstream')\n"
    assert (wt / "vime/util.py").read_text() == "def f():\n    return 1\n"  # the PR's clean part dropped too
    pin_msg = git.run(wt, ["log", "-1", "--format=%B"]).decode()
    assert "Carry-Skipped: THUDM/slime#2" in pin_msg


def test_abort_leaves_the_repository_as_before(pair: Pair, capsys) -> None:
    refs = pair.down.git("for-each-ref")
    worktrees = pair.down.git("worktree", "list", "--porcelain")
    code, doc = pair.carry(capsys)
    assert code == 1
    code, out, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0
    assert pair.down.git("for-each-ref") == refs
    assert pair.down.git("worktree", "list", "--porcelain") == worktrees
    assert not Path(doc["worktree"]).exists()
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()
    code, out, err = cli(capsys, "carry", "--continue", cwd=pair.down.path)
    assert code == 2 and "no carry is in progress" in err


def test_abort_from_the_worktree_removes_everything(pair: Pair, capsys) -> None:
    """The conflict message sends the user to the worktree: --abort run there removes it (the
    folder the process stands in) and still removes the branch and the state."""
    refs = pair.down.git("for-each-ref")
    code, doc = pair.carry(capsys)
    assert code == 1
    wt = Path(doc["worktree"])
    code, out, err = cli(capsys, "carry", "--abort", cwd=wt / "vime")
    assert code == 0, err
    assert not wt.exists()
    assert pair.down.git("for-each-ref") == refs
    assert "down." not in pair.down.git("worktree", "list")
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


_KILLER = """
import os, signal, sys
sys.path.insert(0, {root!r})
from vimesync.carry import run
from vimesync.cli.app import main
run.CHECKPOINT = 1  # the branch moves after every commit
real = run.FastImport.commit
count = [0]
def commit(self, *a, **k):
    if count[0] == {after}:
        self.proc.stdin.flush()
        import time
        from vimesync import git
        for _ in range(200):  # until fast-import has landed the last checkpoint
            out = git.run(self.repo, ["rev-list", "--count", "main.." + self.ref]).decode()
            if out.strip() == str({after}):
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)  # the branch moved, the state was not saved
    count[0] += 1
    return real(self, *a, **k)
run.FastImport.commit = commit
os.chdir({cwd!r})
main(["carry"])
"""


@pytest.mark.parametrize("after", [1, 2])
def test_a_killed_carry_is_resumed_or_aborted(tmp_path: Path, capsys, after: int) -> None:
    pair = build_pair(tmp_path)
    root = str(Path(__file__).resolve().parents[2])
    code = subprocess.run(
        [sys.executable, "-c", _KILLER.format(root=root, after=after, cwd=str(pair.down.path))],
        # its scratch folder outlives the kill: keep it under tmp_path, not the machine's /tmp
        env={**os.environ, "PYTHONPATH": root, "TMPDIR": str(tmp_path)},
        capture_output=True,
    ).returncode
    assert code == -signal.SIGKILL
    moved = pair.down.git("rev-list", "--count", f"main..sync/{pair.tip[:8]}").strip()
    assert moved == str(after)  # the branch moved past what the state file says
    code, out, _ = cli(capsys, "carry", "--status", cwd=pair.down.path)
    assert code == 0 and "interrupted" in out
    code, doc = pair.carry(capsys, "--continue")
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 2, 3]
    log = pair.down.git("log", "--format=%s", f"main..{doc['branch']}").splitlines()
    assert len(log) == 4  # no PR carried twice
    assert tree(pair.down.path, doc["branch"])["vime/d.py"][1] == b"import vime.c\n"


def test_a_killed_carry_is_aborted(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    refs = pair.down.git("for-each-ref")
    root = str(Path(__file__).resolve().parents[2])
    subprocess.run(
        [sys.executable, "-c", _KILLER.format(root=root, after=1, cwd=str(pair.down.path))],
        env={**os.environ, "PYTHONPATH": root, "TMPDIR": str(tmp_path)},  # as above
        capture_output=True,
    )
    code, out, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0
    assert pair.down.git("for-each-ref") == refs


def test_squash_stops_at_a_conflict_and_continues_into_one_commit(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys, "--squash")
    assert code == 1 and doc["conflict"]["pr"] == 2
    wt = Path(doc["worktree"])
    assert (wt / "vime/c.py").read_text() == "import vime.c\n"  # PR 1, carried before the conflict
    (wt / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('downstream')\n")
    git.run(wt, ["add", "vime/a.py"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 2, 3]
    log = pair.down.git("log", "--format=%s", f"main..{doc['branch']}").splitlines()
    assert len(log) == 2  # the squash commit and the pin bump
    got = tree(pair.down.path, doc["branch"])
    assert got["vime/a.py"][1] == b"from vime import x\nprint(2)\nprint('downstream')\n"
    assert got["vime/d.py"][1] == b"import vime.c\n" and "vime/c.py" not in got
    assert git.run(wt, ["status", "--porcelain"]) == b""


def test_a_commit_someone_else_made_on_the_branch_is_never_taken_over(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys)
    assert code == 1
    wt = Path(doc["worktree"])
    (wt / "vime/a.py").write_text("resolved\n")
    git.run(wt, ["add", "vime/a.py"])
    git.run(wt, ["commit", "-q", "-m", "my own commit"], env=IDENTITY)
    code, _, err = cli(capsys, "carry", "--continue", cwd=wt)
    assert code == 2 and "which this carry did not make" in err
    code, _, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0 and not wt.exists()


@pytest.mark.parametrize("field", ["worktree", "branch"])
def test_abort_never_removes_a_worktree_or_branch_the_carry_did_not_make(
    pair: Pair, capsys, tmp_path: Path, field: str
) -> None:
    """A state naming someone else's worktree or branch (corrupted, or edited by hand): --abort
    removes only the carry's own worktree (on the carry's branch) and never a branch checked out
    elsewhere, so no uncommitted work is lost."""
    import json

    code, doc = pair.carry(capsys)
    assert code == 1
    mine = tmp_path / "mine"
    pair.down.git("worktree", "add", "-q", "-b", "mine", str(mine))
    (mine / "unsaved.txt").write_text("work in progress\n")
    state_file = git.git_dir(pair.down.path) / "vimesync-carry.json"
    state = json.loads(state_file.read_text())
    state[field] = str(mine) if field == "worktree" else "mine"
    state_file.write_text(json.dumps(state))
    code, out, err = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert "Traceback" not in err
    assert (mine / "unsaved.txt").read_text() == "work in progress\n"
    assert "refs/heads/mine" in pair.down.git("for-each-ref", "--format=%(refname)")
    assert not state_file.exists()


@pytest.mark.parametrize(
    "field, value",
    [
        ("branch", "x\nreset refs/heads/main"),
        ("last", "0" * 40 + "\nreset refs/heads/main"),
        ("onto", "HEAD"),
    ],
)
def test_a_state_with_values_vimesync_never_writes_is_refused(
    pair: Pair, capsys, field: str, value: str
) -> None:
    import json

    code, doc = pair.carry(capsys)
    assert code == 1
    main_before = pair.down.head()
    state_file = git.git_dir(pair.down.path) / "vimesync-carry.json"
    state = json.loads(state_file.read_text())
    state[field] = value
    state_file.write_text(json.dumps(state))
    code, out, err = cli(capsys, "carry", "--continue", cwd=pair.down.path)
    assert code == 2 and "not a carry state vimesync can read" in err and "Traceback" not in err
    assert pair.down.head() == main_before
    code, _, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0 and pair.down.head() == main_before


def test_continue_keeps_the_rules_the_carry_started_with(tmp_path: Path, capsys) -> None:
    """An upstream PR adds slime/vimesync.toml (carried as vime/vimesync.toml). The user resolves a
    later conflict from the worktree's vime/ and runs --continue there: config discovery finds the
    upstream's file, yet the rest of the carry keeps the map and translations it started with."""
    p = build_pair(tmp_path)
    hostile = (
        "[upstream]\n[[upstream.translate]]\n"
        "pattern = 'import'\nreplace = 'import os; os.system(1); import'\n"
        f'[downstream]\npath = "{tmp_path / "other"}"\n'  # a carry elsewhere is not this one
    )
    git.run(tmp_path, ["init", "-q", "other"])
    p.up.commit("Add config (#4)", {"slime/vimesync.toml": hostile})
    p.up.commit("Touch a (#5)", {"slime/a.py": "from slime import x\nprint(5)\n"})
    p.up.commit("Add new (#6)", {"slime/new.py": "from slime import y\n"})
    tip = p.up.head()
    code, doc = p.carry(capsys, "--range", f"{p.tip}..{tip}", "--branch", "s")
    assert code == 1 and doc["conflict"]["pr"] == 5
    wt = Path(doc["worktree"])
    assert (wt / "vime/vimesync.toml").read_text() == hostile
    (wt / "vime/a.py").write_text("from vime import x\nprint(5)\n")
    git.run(wt, ["add", "vime/a.py"])
    code, doc = p.carry(capsys, "--continue", cwd=wt / "vime")
    assert code == 0 and doc["status"] == "done", doc
    got = tree(p.down.path, "s")
    assert got["vime/new.py"][1] == b"from vime import y\n"


def test_junit_has_a_case_per_pr_and_the_conflict_fails(pair: Pair, capsys, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    junit = tmp_path / "carry.xml"
    code, doc = pair.carry(capsys, "--junit", str(junit), "--annotations", "none")
    assert code == 1 and doc["kind"] == "carry" and doc["ok"] is False and doc["exit_code"] == 1
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["#1 " + doc["carried"][0]["title"]].find("failure") is None
    assert cases["#2 Change a and util"].find("failure") is not None


def test_a_rename_onto_a_file_deleted_downstream_stops_as_rename_delete(tmp_path: Path, capsys) -> None:
    # Issue 17.10: git cherry-pick stops with a rename/delete conflict; carry once re-added the
    # module as clean (and the audit then called it identical).
    pair = build_pair(tmp_path)
    body = "".join(f"metric {i}\n" for i in range(20))
    pair.up.commit("Add telemetry (#7)", {"slime/telemetry.py": body})
    mid = pair.up.head()
    pair.up.git("mv", "slime/telemetry.py", "slime/obs.py")
    pair.up.commit("Move telemetry (#8)")
    tip = pair.up.head()
    pair.down.commit("carried #7\n\nUpstream-PR: THUDM/slime#7", {"vime/telemetry.py": body})
    pair.down.commit("no telemetry downstream", {"vime/telemetry.py": None})
    code, doc = pair.carry(capsys, "--range", f"{mid}..{tip}", "--branch", "rd")
    assert code == 1, doc
    assert doc["conflict"]["pr"] == 8
    assert [(f["path"], f["why"]) for f in doc["conflict"]["files"]] == [("vime/obs.py", "rename/delete")]
    wt = Path(doc["worktree"])
    stages = [line.split() for line in git.run(wt, ["ls-files", "-u"]).decode().splitlines()]
    assert [(s[2], s[3]) for s in stages] == [("1", "vime/obs.py"), ("3", "vime/obs.py")]
    assert (wt / "vime/obs.py").read_text() == body  # the upstream file, as git shows it
    assert "DU vime/obs.py" in git.run(wt, ["status", "--porcelain"]).decode()
    assert not (wt / "vime/telemetry.py").exists()


def test_conflict_markers_show_the_base_and_a_dry_run_marks_knock_on(pair: Pair, capsys) -> None:
    # Issue 17.11: markers in diff3 style; a dry run predicted every later conflict on a file an
    # earlier predicted conflict left out (9 where the run had 1): those are knock-on now.
    pair.up.commit("Edit a again (#4)", {"slime/a.py": "from slime import x\nprint(3)\n"})
    tip = pair.up.head()
    code, doc = pair.carry(capsys, "--range", f"{pair.base}..{tip}", "--dry-run")
    plan = {p["pr"]: p for p in doc["planned"]}
    assert (plan[2]["conflict"], plan[2]["knock_on"]) == (["vime/a.py"], [])
    assert (plan[4]["conflict"], plan[4]["knock_on"], plan[4]["after"]) == (
        ["vime/a.py"],
        ["vime/a.py"],
        ["#2"],
    )
    code, out, _ = cli(capsys, "carry", "--range", f"{pair.base}..{tip}", "--dry-run", cwd=pair.down.path)
    assert "knock-on of #2: vime/a.py" in out and "1 would conflict (and 1 more as knock-on" in out
    code, doc = pair.carry(capsys, "--range", f"{pair.base}..{tip}")
    assert code == 1 and doc["conflict"]["pr"] == 2
    text = (Path(doc["worktree"]) / "vime/a.py").read_text()
    assert text.splitlines() == [
        "from vime import x",
        "<<<<<<< downstream",
        "print(1)",
        "print('downstream')",
        "||||||| upstream base",
        "print(1)",
        "=======",
        "print(2)",
        ">>>>>>> upstream #2",
    ]


def test_a_conflict_names_the_left_out_pr_its_lines_come_from(tmp_path: Path, capsys) -> None:
    # Issue 17.11: the lines a PR changes were written by a PR the policy excluded; the conflict
    # says so ("the lines come from #4, excluded by the policy ... (rule 1)"), as sqren/backport does.
    pair = build_pair(tmp_path)
    lines = [f"value {i}\n" for i in range(10)]
    pair.up.commit("Add table (#3)", {"slime/table.py": "".join(lines)})
    start = pair.up.head()
    pair.down.commit("carried #3\n\nUpstream-PR: THUDM/slime#3", {"vime/table.py": "".join(lines)})
    pair.up.commit("NPU tuning (#4)", {"slime/table.py": "".join([*lines[:4], "value 4 npu\n", *lines[5:]])})
    pair.up.commit(
        "Tune value 4 (#5)", {"slime/table.py": "".join([*lines[:4], "value 4 npu fast\n", *lines[5:]])}
    )
    tip = pair.up.head()
    (pair.down.path / "policy.toml").write_text(
        '[[rule]]\naction = "exclude"\nreason = "NPU is not carried"\ntitle = "(?i)\\\\bnpu\\\\b"\n'
    )
    code, doc = pair.carry(capsys, "--range", f"{start}..{tip}", "--policy", "policy.toml", "--branch", "h")
    assert code == 1 and doc["conflict"]["pr"] == 5, doc
    (f,) = doc["conflict"]["files"]
    assert f["path"] == "vime/table.py"
    assert (
        f["hint"] == "the conflicting lines come from #4, excluded by the policy: NPU is not carried (rule 1)"
    )
    cli(capsys, "carry", "--abort", cwd=pair.down.path)
    code, out, _ = cli(
        capsys,
        "carry",
        "--range",
        f"{start}..{tip}",
        "--policy",
        "policy.toml",
        "--branch",
        "t",
        cwd=pair.down.path,
    )
    assert code == 1 and "hint: the conflicting lines come from #4, excluded by the policy" in out


def test_a_carry_counts_what_it_left_out_by_why() -> None:
    # Issue 29 item 17: "37 carried, 1 skipped" counted the policy-excluded PR as skipped.
    from vimesync.carry.model import EMPTY, EMPTY_RESOLVED, SKIPPED, SkippedItem, left_out

    items = [
        SkippedItem(1, "npu", "excluded by the policy: Ascend (rule 1)"),
        SkippedItem(2, "docs", "already downstream: trailer Upstream-PR in 0123456789ab"),
        SkippedItem(3, "dup", EMPTY),
        SkippedItem(4, "gone", EMPTY_RESOLVED),
        SkippedItem(None, "lint", "direct push (no PR): --direct include carries it"),
        SkippedItem(5, "hard", SKIPPED),
    ]
    assert left_out(items) == (
        "1 excluded, 2 already downstream, 1 empty, 1 direct (not carried), 1 skipped at a conflict"
    )
    assert left_out(items[:1]) == "1 excluded" and left_out([]) == ""
