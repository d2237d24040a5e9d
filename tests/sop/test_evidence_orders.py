"""A maintainer reviews, commits the ledger, records evidence and commits it, in any order, and the
tests gate holds (issue 29 item 1); a file under sop/records/ that is not vimesync's own moves the
evidence head and is audited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.gitrepo import commit_env
from vimesync import git
from vimesync.cli.app import main
from vimesync.demo.build import Demo

GREEN = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'
GATES = '\n[evidence]\nrequired = ["CPU regressions", "lab run"]\n'

# The four steps; a commit step needs its writing step before it.
REVIEW, COMMIT_LEDGER, RECORD, COMMIT_RECORDS = "review", "commit ledger", "record", "commit records"
ORDERS = [
    (RECORD, COMMIT_RECORDS, REVIEW, COMMIT_LEDGER),  # the order the issue saw fail
    pytest.param((REVIEW, COMMIT_LEDGER, RECORD, COMMIT_RECORDS), marks=pytest.mark.slow),
    pytest.param((REVIEW, RECORD, COMMIT_LEDGER, COMMIT_RECORDS), marks=pytest.mark.slow),
    pytest.param((REVIEW, RECORD, COMMIT_RECORDS, COMMIT_LEDGER), marks=pytest.mark.slow),
    pytest.param((RECORD, REVIEW, COMMIT_LEDGER, COMMIT_RECORDS), marks=pytest.mark.slow),
    pytest.param((RECORD, REVIEW, COMMIT_RECORDS, COMMIT_LEDGER), marks=pytest.mark.slow),
    pytest.param((REVIEW, RECORD, "commit both"), marks=pytest.mark.slow),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, _ = capsys.readouterr()
    return int(exc.value.code or 0), out


def _commit(demo: Demo, message: str, *paths: str) -> None:
    git.run(demo.downstream, ["add", "--", *paths])
    git.run(demo.downstream, ["commit", "-qm", message], env=commit_env())


@pytest.fixture
def sync(demo: Demo) -> Iterator[Demo]:
    """The demo with a code change and the required evidence committed, put back after."""
    start = git.resolve(demo.downstream, "HEAD")
    (demo.downstream / "vime").mkdir(exist_ok=True)
    (demo.downstream / "vime/extra.py").write_text("EXTRA = 1\n")
    gates = demo.downstream / "sop/gates.toml"
    gates.write_text(gates.read_text() + GATES)
    _commit(demo, "an extra module, and the evidence it needs", "vime/extra.py", "sop/gates.toml")
    yield demo
    git.run(demo.downstream, ["reset", "-q", "--hard", start])


def _gates(demo: Demo, capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    _, out = run(["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--json"], capsys)
    return {g["name"]: g for g in json.loads(out)["gates"]}


def _step(step: str, demo: Demo, capsys: pytest.CaptureFixture[str], junit: str) -> None:
    if step == REVIEW:
        review = ["audit", "review", "--all-unreviewed", "--by", "alice", "--baseline", demo.baseline]
        assert run(review, capsys)[0] == 0
    elif step == RECORD:
        assert run(["sop", "record", "tests", "--suite", "CPU regressions", "--junit", junit], capsys)[0] == 0
        assert run(["sop", "record", "run", "--name", "lab run", "--exit", "0"], capsys)[0] == 0
    elif step == COMMIT_LEDGER:
        _commit(demo, "review ledger", "sop/reviews")
    elif step == COMMIT_RECORDS:
        _commit(demo, "evidence", "sop/records")
    else:
        _commit(demo, "review ledger and evidence", "sop/reviews", "sop/records")


@pytest.mark.parametrize("order", ORDERS)
def test_the_gates_hold_in_any_order(
    sync: Demo, capsys: pytest.CaptureFixture[str], tmp_path: Path, order: tuple[str, ...]
) -> None:
    junit = tmp_path / "r.xml"
    junit.write_text(GREEN)
    for step in order:
        _step(step, sync, capsys, str(junit))
    gates = _gates(sync, capsys)
    assert gates["audit"]["state"] == "held", gates["audit"]
    assert gates["tests"]["state"] == "held", gates["tests"]
    assert git.run(sync.downstream, ["status", "--porcelain"]) == b""


def test_a_conftest_under_sop_records_moves_the_head_and_is_audited(
    sync: Demo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "r.xml"
    junit.write_text(GREEN)
    for step in (REVIEW, RECORD, "commit both"):
        _step(step, sync, capsys, str(junit))
    assert _gates(sync, capsys)["tests"]["state"] == "held"
    (sync.downstream / "sop/records/conftest.py").write_text("import os\n")
    _commit(sync, "a stranger's records-only commit", "sop/records")
    gates = _gates(sync, capsys)
    assert gates["tests"]["state"] == "failed", gates["tests"]
    assert gates["audit"]["state"] != "held" and "1" in gates["audit"]["detail"], gates["audit"]
    _, out = run(["audit", "--baseline", sync.baseline, "--json"], capsys)
    assert [p["path"] for p in json.loads(out)["paths"] if p["review"] == "unreviewed"] == [
        "sop/records/conftest.py"
    ]
