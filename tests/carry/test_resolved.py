"""A conflict the maintainer resolved during the carry reaches the report and the audit (issue 29,
item 8): found by replaying the carry's merge, not by reading commit messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import Pair, build_pair, cli
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
