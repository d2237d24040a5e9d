"""A conflict the maintainer resolved during the carry reaches the report and the audit (issue 29,
item 8): found by replaying the carry's merge, not by reading commit messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.pair import CONFIG, PIN, Pair, build_pair, cli
from vimesync import git

pytestmark = pytest.mark.slow  # carries with conflicts in real repositories

DOWNSTREAM_A = "from vime import x\nprint(1)\nprint('downstream')\n"


@pytest.fixture()
def pair(tmp_path: Path) -> Pair:
    p = build_pair(tmp_path)
    p.down.commit("diverge", {"vime/a.py": DOWNSTREAM_A})
    return p


def _carry_keeping_downstream(pair: Pair, capsys: pytest.CaptureFixture[str]) -> Path:
    code, doc = pair.carry(capsys)
    assert code == 1 and doc["conflict"]["pr"] == 2
    wt = pair.worktree()
    (wt / "vime/a.py").write_text(DOWNSTREAM_A)  # the maintainer keeps the downstream side
    git.run(wt, ["add", "vime/a.py"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0, doc
    return wt


def _report(pair: Pair, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    branch = f"sync/{pair.tip[:8]}"
    code, out, _ = cli(capsys, "report", "--baseline", "main", "--head", branch, *args, cwd=pair.down.path)
    return code, out


def test_a_kept_downstream_side_is_carried_with_changes(pair: Pair, capsys) -> None:
    _carry_keeping_downstream(pair, capsys)
    code, out = _report(pair, capsys, "--format", "json")
    doc = json.loads(out)
    summary = doc["summary"]
    assert [p["number"] for p in summary["applicable"]] == [1, 2, 3]
    (item,) = summary["resolved"]["items"]
    assert item["pr"] == 2 and [f["path"] for f in item["files"]] == ["vime/a.py"]
    (f,) = item["files"]
    assert f["why"] == "conflict: content" and f["dropped"] == ["print(2)"] and f["dropped_count"] == 1
    # the audit lists the file, unchanged against the baseline, as needing a review
    paths = {p["path"]: p for p in doc["audit"]["paths"]}
    assert paths["vime/a.py"]["class"] == "resolved" and paths["vime/a.py"]["review"] == "unreviewed"
    assert paths["vime/a.py"]["resolved_in"] == ["#2"]
    assert "vime/a.py" in doc["audit"]["unreviewed"]

    _, md = _report(pair, capsys)
    assert "3 applicable merged PRs (3 carried, 1 of them with changes)" in md
    assert "Change a and util — carried with changes (1 file resolved by hand)" in md
    assert "- `vime/a.py`: conflict: content, resolved by hand; 1 of 1 line the upstream added" in md
    assert "```diff\n-print(2)\n```" in md
    assert "- `vime/a.py` (resolved in `#2`): unreviewed" in md

    # reviewed through the ledger, it holds
    wt = pair.worktree()
    code, _, err = cli(capsys, "audit", "review", "vime/a.py", "--by", "Maint", "--baseline", "main", cwd=wt)
    assert code == 0, err
    code, out, _ = cli(capsys, "audit", "--json", "--baseline", "main", cwd=wt)
    doc = json.loads(out)
    paths = {p["path"]: p for p in doc["paths"]}
    assert paths["vime/a.py"]["class"] == "resolved" and paths["vime/a.py"]["review"] == "reviewed"


def test_a_clean_carry_has_nothing_resolved(pair: Pair, capsys) -> None:
    pair.down.commit("undo", {"vime/a.py": "from vime import x\nprint(1)\n"})
    code, _ = pair.carry(capsys)
    assert code == 0
    _, out = _report(pair, capsys, "--format", "json")
    doc = json.loads(out)
    assert doc["summary"]["resolved"]["items"] == [] and doc["summary"]["resolved"]["replayed"] == 3
    assert "resolved" not in {p["class"] for p in doc["audit"]["paths"]}


def _resolved(pair: Pair, capsys: pytest.CaptureFixture[str]) -> dict[int, dict[str, dict]]:
    _, out = _report(pair, capsys, "--format", "json")
    items = json.loads(out)["summary"]["resolved"]["items"]
    return {i["pr"]: {f["path"]: f for f in i["files"]} for i in items}


def test_a_conflict_resolved_to_nothing_is_carried_with_every_line_dropped(pair: Pair, capsys) -> None:
    # Both files of #2 kept as the downstream had them: the item makes no commit ("empty after
    # the conflict was resolved"), and the pin bump names it carried (Upstream-PR).
    pair.down.commit("diverge util", {"vime/util.py": "def f():\n    return 3\n"})
    code, doc = pair.carry(capsys)
    assert code == 1 and {f["path"] for f in doc["conflict"]["files"]} == {"vime/a.py", "vime/util.py"}
    wt = pair.worktree()
    git.run(wt, ["checkout", "--ours", "--", "vime/a.py", "vime/util.py"])
    git.run(wt, ["add", "vime/a.py", "vime/util.py"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 3]
    files = _resolved(pair, capsys)[2]
    assert files["vime/a.py"]["dropped"] == ["print(2)"]
    assert files["vime/util.py"]["dropped"] == ["    return 2"]


def test_an_edit_made_during_continue_is_resolved_too(pair: Pair, capsys) -> None:
    code, _ = pair.carry(capsys)
    wt = pair.worktree()
    (wt / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('downstream')\n")  # both sides
    (wt / "vime/extra.py").write_text("slipped in\n")
    git.run(wt, ["add", "vime/a.py", "vime/extra.py"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0
    files = _resolved(pair, capsys)[2]
    assert files["vime/a.py"]["why"] == "conflict: content" and files["vime/a.py"]["dropped"] == []
    assert files["vime/a.py"]["added_count"] == 1  # every upstream line kept: still a resolution
    assert files["vime/extra.py"]["why"] == "edited outside the upstream change"


def test_a_hand_made_commit_naming_a_pr_is_replayed(pair: Pair, capsys) -> None:
    # #2 skipped at its conflict, then "carried" by a commit made by hand with its trailer and
    # only part of its change: the trailer counts it carried, the replay shows what is missing.
    code, _ = pair.carry(capsys)
    code, doc = pair.carry(capsys, "--skip")
    assert code == 0
    wt = pair.worktree()
    (wt / "vime/util.py").write_text("def f():\n    return 2\n")
    git.run(wt, ["add", "vime/util.py"])
    message = "Change a and util\n\nUpstream-PR: THUDM/slime#2\n"
    git.run(wt, ["-c", "user.name=M", "-c", "user.email=m@x", "commit", "-q", "-m", message])
    _, out = _report(pair, capsys, "--format", "json")
    assert 2 in [p["number"] for p in json.loads(out)["summary"]["applicable"]]
    files = _resolved(pair, capsys)[2]
    assert set(files) == {"vime/a.py"} and files["vime/a.py"]["dropped"] == ["print(2)"]


def test_a_clean_squashed_carry_has_nothing_resolved(pair: Pair, capsys) -> None:
    pair.down.commit("undo", {"vime/a.py": "from vime import x\nprint(1)\n"})
    code, _ = pair.carry(capsys, "--squash")
    assert code == 0
    _, out = _report(pair, capsys, "--format", "json")
    resolved = json.loads(out)["summary"]["resolved"]
    assert resolved["items"] == [] and resolved["replayed"] == 3 and resolved["notes"] == []


def test_two_prs_of_one_file_both_resolved_to_nothing_are_each_carried_with_changes(
    tmp_path: Path, capsys
) -> None:
    # Both make no commit, so the pin bump names both (Upstream-PR): the file's resolution is
    # each one's, not only the last one's (seen on a real slime sync: #1609 read "carried").
    up = Repo(tmp_path / "up")
    up.commit("init", {"slime/a.py": "from slime import x\nprint(1)\n"})
    base = up.head()
    up.commit("One (#1)", {"slime/a.py": "from slime import x\nprint(2)\n"})
    up.commit("Two (#2)", {"slime/a.py": "from slime import x\nprint(2)\nprint(3)\n"})
    down = Repo(tmp_path / "down")
    down.commit(
        "import",
        {"vime/a.py": DOWNSTREAM_A, "vimesync.toml": CONFIG, "pins/slime.toml": PIN.format(base=base)},
    )
    pair = Pair(root=tmp_path, up=up, down=down, base=base, tip=up.head())
    code, doc = pair.carry(capsys)
    assert code == 1 and doc["conflict"]["pr"] == 1
    wt = pair.worktree()
    for _ in range(2):
        git.run(wt, ["checkout", "--ours", "--", "vime/a.py"])
        git.run(wt, ["add", "vime/a.py"])
        code, doc = pair.carry(capsys, "--continue", cwd=wt)
        if code == 0:
            break
    assert code == 0 and doc["carried"] == []
    bump = git.run(pair.down.path, ["log", "-1", "--format=%B", doc["branch"]]).decode()
    assert ": 0 carried, 0 already in the downstream, 2 empty after the conflict was resolved," in bump
    files = _resolved(pair, capsys)
    assert set(files) == {1, 2}
    assert files[1]["vime/a.py"]["dropped"] == ["print(2)"]
    assert "print(3)" in files[2]["vime/a.py"]["dropped"]


def test_the_replay_pairs_no_hunks_of_a_conflict_it_finds(
    pair: Pair, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay reads a conflict's path and kind only: the hunks the carry pairs for its own
    conflict (difflib over the whole file, 80 ms for slime's 2,000-line arguments.py) are not
    paired again by each report, audit and ``sync --continue``. Counted, not timed: the
    SequenceMatcher objects the merge makes while the report replays the carry."""
    from vimesync.carry import merge

    _carry_keeping_downstream(pair, capsys)
    made = []

    class Counting(merge.difflib.SequenceMatcher):  # type: ignore[type-arg]
        def __init__(self, *a, **kw) -> None:
            made.append(1)
            super().__init__(*a, **kw)

    monkeypatch.setattr(merge.difflib, "SequenceMatcher", Counting)
    code, out = _report(pair, capsys, "--format", "json")
    (item,) = json.loads(out)["summary"]["resolved"]["items"]
    assert [(f["path"], f["why"]) for f in item["files"]] == [("vime/a.py", "conflict: content")]
    assert made == []
