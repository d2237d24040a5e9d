"""The report describes the head: what it carries, what it does not (and why), over the range
from the pin at the baseline to the pin at the head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import build_pair, cli
from vimesync.report.build import ReportParts, build_report
from vimesync.report.model import Summary, SyncReport
from vimesync.upstream.model import WalkResult

pytestmark = pytest.mark.slow  # a carry and a report in real repositories


def test_report_counts_what_the_head_carries_and_lists_what_it_does_not(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    pair.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    code, doc = pair.carry(capsys)
    assert code == 1 and doc["conflict"]["pr"] == 2
    code, doc = pair.carry(capsys, "--skip")
    assert code == 0
    branch = doc["branch"]
    # The pin is bumped on the branch: the report's range still runs from the baseline's pin.
    code, out, _ = cli(
        capsys, "report", "--format", "json", "--baseline", "main", "--head", branch, cwd=pair.down.path
    )
    assert code == 1  # an applicable PR is not carried
    doc = json.loads(out)
    summary = doc["summary"]
    assert (summary["base"], summary["tip"]) == (pair.base, pair.tip)
    assert summary["head_known"] is True
    # the classified gate counts the PRs walk lists, carried or not (it said "classified 2")
    walked = pair.walked(capsys, "main")
    classified = next(g for g in doc["gates"] if g["name"] == "classified")
    assert classified["detail"].startswith(f"{len(walked)} PRs of ")
    assert [p["number"] for p in summary["applicable"]] == [1, 3]
    assert [(p["number"], p["reason"]) for p in summary["not_carried"]] == [
        (2, "skipped at a conflict (vimesync carry --skip)")
    ]
    code, md, _ = cli(capsys, "report", "--baseline", "main", "--head", branch, cwd=pair.down.path)
    assert (
        # every count is of the PRs walk lists (issue 17, item 12): 3 applicable, 2 carried
        f"Mirror Slime from {pair.base[:8]} through {pair.tip[:8]}: 3 applicable merged PRs"
        " (2 carried, 1 not carried)" in md
    )
    assert "Not carried:" in md and "skipped at a conflict" in md
    # Before any carry: nothing carried, every applicable PR "not yet carried".
    code, out, _ = cli(
        capsys, "report", "--format", "json", "--baseline", "main", "--head", "main", cwd=pair.down.path
    )
    summary = json.loads(out)["summary"]
    assert summary["applicable"] == [] and {p["reason"] for p in summary["not_carried"]} == {
        "not yet carried"
    }
    assert (summary["base"], summary["tip"]) == (pair.base, pair.tip)  # the pin unmoved: the branch tip


def test_everything_carried_leaves_nothing_not_carried(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    code, doc = pair.carry(capsys)
    assert code == 0
    code, out, _ = cli(
        capsys,
        "report",
        "--format",
        "json",
        "--baseline",
        "main",
        "--head",
        doc["branch"],
        cwd=pair.down.path,
    )
    summary = json.loads(out)["summary"]
    assert [p["number"] for p in summary["applicable"]] == [1, 2, 3] and summary["not_carried"] == []


def test_not_carried_fails_the_report_whatever_else_passes() -> None:
    walk = WalkResult(base="a" * 40, tip="b" * 40, prs=(), direct_commits=())
    ok = build_report(ReportParts(walk=walk, carried=frozenset()))
    assert isinstance(ok.summary, Summary) and ok.checks_ok
    from tests.builders.upstream import POLICY  # noqa: F401  (the shared fixtures import cleanly)
    from vimesync.upstream.model import PullRequest

    pr = PullRequest(number=5, title="t", commits=("c" * 40,), paths=(), merge_commit="c" * 40, kind="squash")
    bad: SyncReport = build_report(
        ReportParts(
            walk=WalkResult(base="a" * 40, tip="b" * 40, prs=(pr,), direct_commits=()), carried=frozenset()
        )
    )
    assert isinstance(bad.summary, Summary) and [p.reason for p in bad.summary.not_carried] == [
        "not yet carried"
    ]
    assert not bad.checks_ok


def test_a_range_with_applicable_prs_not_carried_fails_the_carried_gate(tmp_path: Path, capsys) -> None:
    # issue 29, item 9: with --range given and every other gate switched off, the report said
    # ok (exit 0) with 2 of 3 applicable PRs not carried, and its title claimed the whole range.
    pair = build_pair(tmp_path)
    code, doc = pair.carry(capsys, "--pr", "1")
    assert code == 0
    skips = [w for g in ("patches", "audit", "tests", "ci") for w in ("--skip-gate", g)]
    args = ["report", "--range", f"{pair.base}..{pair.tip}", "--baseline", "main", "--head", doc["branch"]]
    code, out, _ = cli(capsys, *args, "--format", "json", *skips, cwd=pair.down.path)
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["gates_ok"] is False
    gate = next(g for g in doc["gates"] if g["name"] == "carried")
    assert gate["state"] == "failed" and gate["detail"] == "2 applicable PRs not carried at the head: #2, #3"
    assert doc["title"] == (
        f"[Sync] Mirror Slime through {pair.tip[:8]}, partly: 1 of 3 applicable PRs carried (#1)"
    )
    code, md, _ = cli(capsys, *args, *skips, cwd=pair.down.path)
    assert code == 1 and "- ✗ **carried**: failed — 2 applicable PRs not carried at the head" in md
    # switched off, it holds as the others do
    code, _, _ = cli(capsys, *args, *skips, "--skip-gate", "carried", cwd=pair.down.path)
    assert code == 0
