"""``vimesync sync`` on a pair whose downstream diverged (issue 22): it stops at the carry's
conflict naming the files and the command after it; ``--continue`` commits the resolution and
goes on to the next decision (paths to review); ``--abort`` there runs carry's abort."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.pair import Pair, build_pair, cli
from tests.builders.syncdemo import sync_json
from vimesync import git

pytestmark = pytest.mark.slow  # carries with conflicts in real repositories


@pytest.fixture()
def pair(tmp_path: Path) -> Pair:
    p = build_pair(tmp_path)
    p.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    return p


def test_sync_stops_at_a_conflict_and_continue_goes_on(pair: Pair, capsys) -> None:
    code, doc, _ = sync_json(capsys, pair.down.path)
    assert code == 1 and doc["stopped"] == "carry"
    assert [s["name"] for s in doc["steps"]] == ["walk", "carry"] and doc["steps"][1]["ok"] is False
    assert "vime/a.py" in doc["decision"] and "#2" in doc["decision"]
    wt = Path(doc["worktree"])
    assert doc["next"] == (
        f"resolve the files in {wt}, git add them, then vimesync sync --continue"
        " (or vimesync carry --skip, then the same)"
    )
    # --continue before resolving: the carry says so (exit 1), nothing is recorded.
    code, _, err = cli(capsys, "sync", "--continue", cwd=wt)
    assert code == 1 and "still in conflict" in err
    (wt / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('downstream')\n")
    git.run(wt, ["add", "vime/a.py"])
    code, doc, err = sync_json(capsys, wt, "--continue")
    assert code == 1, err
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["walk"]["reused"] and not steps["carry"]["reused"]
    # the direct push: not carried, not "skipped" (only --skip skips)
    assert steps["carry"]["figure"] == f"3 carried onto sync/{pair.tip[:8]}, 1 direct (not carried)"
    assert steps["patches"]["figure"] == "no engine pinned: nothing to check"
    assert doc["stopped"] == "audit" and "review" in steps["audit"]["figure"]
    assert doc["next"].startswith(f"in {wt}: vimesync audit review ") and "--by NAME" in doc["next"]


def test_abort_at_a_conflict_aborts_the_carry(pair: Pair, capsys) -> None:
    code, doc, _ = sync_json(capsys, pair.down.path)
    assert code == 1
    wt = Path(doc["worktree"])
    code, doc, _ = sync_json(capsys, pair.down.path, "--abort")
    assert code == 0 and doc["carry"]["branch"] == f"sync/{pair.tip[:8]}"
    assert not wt.exists() and not git.run_ok(
        pair.down.path, ["rev-parse", "--verify", "--quiet", f"sync/{pair.tip[:8]}"]
    )
    assert not (git.git_dir(pair.down.path) / "vimesync-sync.json").exists()
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_a_kept_downstream_side_is_reviewed_and_reported(pair: Pair, capsys, monkeypatch) -> None:
    # issue 29, item 8: the maintainer keeps the downstream side of the conflict; the sync then
    # asks for a review of that file (unchanged against the baseline) and the report names it.
    from vimesync.carry import replay as replay_mod

    runs: list[int] = []
    real = replay_mod.replay

    def counted(inputs: replay_mod.ReplayInputs) -> object:
        runs.append(1)
        return real(inputs)

    monkeypatch.setattr(replay_mod, "replay", counted)
    code, doc, _ = sync_json(capsys, pair.down.path)
    wt = Path(doc["worktree"])
    git.run(wt, ["checkout", "--ours", "--", "vime/a.py"])
    git.run(wt, ["add", "vime/a.py"])
    runs.clear()
    code, doc, err = sync_json(capsys, wt, "--continue")
    assert code == 1 and doc["stopped"] == "audit", err
    assert "vime/a.py" in doc["decision"]
    assert len(runs) == 1  # the replay ran once for the audit step
    code, _, err = cli(capsys, "audit", "review", "--all-unreviewed", "--by", "Maint", cwd=wt)
    assert code == 0, err
    runs.clear()
    skips = [w for g in ("patches", "tests", "ci", "images") for w in ("--skip-gate", g)]
    code, doc, err = sync_json(capsys, wt, "--continue", *skips)
    # audit, status and report share one workspace, and take the replay the last run made at
    # this head (app/synckept.py): none
    assert runs == []
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["audit"]["ok"], err
    assert code == 0 and steps["report"]["ok"], err
    report = Path(steps["report"]["figure"].removeprefix("written to ")).read_text()
    assert "carried with changes (1 file resolved by hand)" in report
    assert "```diff\n-print(2)\n```" in report
