"""Evidence binds to the evidence head: a commit that changes only sop/records/ does not move it,
any other change does; the report shows each record with who committed it, and lists records of
other heads as not evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.audit.bookkeeping import Bookkeeping
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo
from vimesync.sop.binding import evidence_head

JUNIT = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'
EVIL = '<testsuite><testcase classname="t" name="x&lt;img src=x&gt;|`@here"><failure/></testcase></testsuite>'


def test_records_only_commits_do_not_move_the_evidence_head(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    assert evidence_head(repo.path, code) == code
    rec = repo.commit("record", {"sop/records/s.toml": "# x\n"})
    empty = repo.commit("empty")
    assert evidence_head(repo.path, rec) == code and evidence_head(repo.path, empty) == code
    both = repo.commit("both", {"sop/records/s.toml": "# y\n", "b.py": "2\n"})
    assert evidence_head(repo.path, both) == both
    # a file beside sop/records (sop/recordsx, sop/records.toml) is a change like any other
    other = repo.commit("near", {"sop/records.toml": "x\n"})
    assert evidence_head(repo.path, other) == other
    # a merge counts by its change against its first parent
    repo.branch("side", code)
    repo.checkout("side")
    repo.commit("side records", {"sop/records/t.toml": "# t\n"})
    repo.checkout("main")
    merge = repo.merge("side", "merge records")
    assert evidence_head(repo.path, merge) == other
    assert evidence_head(repo.path, merge, Bookkeeping.beside("sub")) == merge


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Demo:
    built = build_demo(tmp_path / "d")
    monkeypatch.chdir(built.downstream)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    return built


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _commit(demo: Demo, message: str, *paths: str) -> None:
    """A commit by the builders' committer, ``vimesync <vimesync@localhost>``."""
    repo = Repo.__new__(Repo)  # the demo's checkout as it is (no git init)
    repo.path = demo.downstream
    repo.git("add", "--", *paths)
    repo.git("commit", "-qm", message)


def test_committed_records_stay_evidence_and_name_their_committer(demo: Demo, capsys, tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    junit.write_text(JUNIT)
    suite = ["sop", "record", "tests", "--junit", str(junit), "--suite"]
    assert run([*suite, "CPU regressions"], capsys)[0] == 0
    assert (
        run(["sop", "record", "run", "--name", "GPU smoke", "--exit", "0", "--duration", "4m03s"], capsys)[0]
        == 0
    )
    _commit(demo, "record evidence", "sop/records")
    assert run([*suite, "baked runtime image checks"], capsys)[0] == 0
    code, out, _ = run(["report", "--baseline", demo.baseline], capsys)
    assert "- ✓ **audit**: held" in out  # the records file is not a path to review
    head8, bound8 = out.split("Recorded evidence for ")[1][:8], demo.head[:8]
    assert f"Recorded evidence for {head8} (recorded at {bound8}):" in out
    assert "- CPU regressions: 2 passed; baked runtime image checks: 2 passed." in out
    assert "- GPU smoke: exit 0 in 4m03s, typed." in out
    assert (
        "CPU regressions, GPU smoke committed by vimesync \\<vimesync@localhost\\>; "
        "baked runtime image checks not committed yet (the working tree's claim)."
    ) in out
    # a change to anything else moves the evidence head: the records are no longer evidence
    (demo.downstream / "NOTES.md").write_text("later\n")
    _commit(demo, "a later change", "NOTES.md")
    code, out, _ = run(["report", "--baseline", demo.baseline, "--json"], capsys)
    doc = json.loads(out)["evidence"]
    assert doc["recorded"] == [] and {r["name"] for r in doc["not_evidence"]} == {
        "CPU regressions",
        "baked runtime image checks",
        "GPU smoke",
    }
    assert next(r for r in doc["not_evidence"] if r["name"] == "GPU smoke")["committed_by"].startswith(
        "vimesync <"
    )
    code, out, _ = run(["report", "--baseline", demo.baseline], capsys)
    assert f"Not evidence for {doc['head'][:8]} (recorded at other heads):" in out
    assert f"- CPU regressions at {bound8}: 2 passed." in out


def test_hostile_names_reach_the_report_escaped(demo: Demo, capsys, tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    junit.write_text(EVIL)
    assert run(["sop", "record", "tests", "--suite", "GPU (#1) smoke", "--junit", str(junit)], capsys)[0] == 0
    note = ["--note", "see <script> | `x` @here [a](javascript:x) #12"]
    assert run(["sop", "record", "run", "--name", "manual", "--exit", "1", *note], capsys)[0] == 0
    _, out, _ = run(["report", "--baseline", demo.baseline], capsys)
    assert [line for line in out.splitlines() if "<script>" in line or "[a](" in line] == []
    assert "@here" not in out.replace("<code>@here</code>", "")
    # a test id is shown as code (inert), the only place the raw "<img" appears
    assert "- Failing in GPU (`#1`) smoke: ``t::x<img src=x>|`" in out and out.count("<img") == 1
    assert "- manual: exit 1, typed. see \\<script\\> \\| \\`x\\`" in out
