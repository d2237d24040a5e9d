"""``vimesync sop regress``: the named tests run for real (pytest, twice) at the commit before a fix
and at the fix, each in a temporary worktree, and the before/after matrix is recorded and reported:
a case that passes before and after is called out, one missing before is "not present before".
Trusted runs only; node ids and interpreters are checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.toml import tomllib
from vimesync.cli.app import main
from vimesync.report.evidencemd import render_evidence
from vimesync.sop.regress import RegressRecord, matrix, regress_phrase
from vimesync.sop.results import load_evidence

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = """\
import pytest

from calc import add


def test_add():
    assert add(2, 2) == 4


def test_zero():
    assert add(0, 0) == 0


@pytest.mark.parametrize("n", [1, 2])
def test_add_n(n):
    assert add(n, n) == 2 * n
"""
MUL_TEST = "\n\ndef test_mul():\n    from calc import mul\n\n    assert mul(2, 3) == 6\n"


@pytest.fixture
def fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, str, str]:
    """A repository whose last commit fixes add() (and adds mul() with its test)."""
    repo = Repo(tmp_path / "r")
    before = repo.commit("broken add", {"calc.py": BROKEN, "tests/test_calc.py": TESTS})
    after = repo.commit(
        "fix add",
        {
            "calc.py": FIXED,
            "tests/test_calc.py": TESTS + MUL_TEST,
            "tests/test_new.py": "def test_new():\n    pass\n",
        },
    )
    monkeypatch.chdir(repo.path)
    return repo, before, after


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


REGRESS = ["sop", "regress", "--sync", "fix", "--before", "HEAD~1"]


@pytest.mark.slow
def test_a_real_fix_gives_the_before_after_matrix(fix: tuple[Repo, str, str], capsys) -> None:
    repo, before, after = fix
    tests = [
        "--test",
        "tests/test_calc.py",
        "--test",
        "tests/test_calc.py::test_mul",
        "--test",
        "tests/test_new.py",
        "--test",
        "tests/test_calc.py::test_typo",  # at neither commit: a note, not a case
        "--test",
        "tests/nope.py",
    ]
    code, out, err = run([*REGRESS, *tests, "--name", "calc regressions", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert list(doc)[:3] == ["kind", "ok", "exit_code"]
    missing = [
        "tests/test_calc.py::test_typo: not found before or after",
        "tests/nope.py: not found before or after",
    ]
    assert doc["notes"] == missing  # test_mul and test_new.py are at the head: not in them
    assert err.splitlines() == [f"warning: {m}" for m in missing]
    rec = doc["record"]
    assert doc["kind"] == "sop-regress" and rec["before"] == before and rec["sha"] == after
    by = {c["test"]: (c["before"], c["after"]) for c in rec["cases"]}
    assert by == {
        "tests/test_calc.py::test_add": ("failed", "passed"),
        "tests/test_calc.py::test_zero": ("passed", "passed"),
        "tests/test_calc.py::test_add_n[1]": ("failed", "passed"),
        "tests/test_calc.py::test_add_n[2]": ("failed", "passed"),
        "tests/test_calc.py::test_mul": ("missing", "passed"),  # a node id pytest could not find before
        "tests/test_new.py::test_new": ("missing", "passed"),  # a file the fix added
    }
    assert rec["not_proving"] == ["tests/test_calc.py::test_zero"]
    stored = tomllib.loads((repo.path / "sop/records/fix.toml").read_text())["regress"]["calc regressions"]
    assert stored[after]["cases"]["tests/test_calc.py::test_add"] == ["failed", "passed"]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1  # ours are gone
    assert not (repo.path / ".pytest_cache").exists()
    code, out, _ = run(
        ["sop", "regress", "--sync", "fix", "--before", "HEAD~1", "--test", "tests/x.py"], capsys
    )
    assert code == 2 and "none of the tests named ran" in out + _


@pytest.mark.slow
def test_a_test_failing_after_fails_the_command(fix: tuple[Repo, str, str], capsys) -> None:
    repo, _, after = fix
    repo.commit("break it again", {"calc.py": BROKEN})  # the fix is now the baseline: a regression
    argv = [
        "sop",
        "regress",
        "--sync",
        "fix",
        "--baseline",
        "HEAD~1",
        "--test",
        "tests/test_calc.py::test_add",
    ]
    code, out, err = run(argv, capsys)
    assert code == 1, err
    assert f"recorded regression matrix: 1 passed before; 1 failed after (before: {after[:8]})" in out
    stored = tomllib.loads((repo.path / "sop/records/fix.toml").read_text())["regress"]["regression matrix"]
    assert [r["before"] for r in stored.values()] == [after]  # the commit, not the name given
    assert err == ""  # every test named was found: no note
    # the same matrix again: refused before any test runs, unless --replace (issue 29 item 7)
    code, out, err = run(argv, capsys)
    assert code == 2 and " ".join(err.split()).startswith(
        f"error: matrix 'regression matrix' is already recorded at {repo.git('rev-parse', 'HEAD')[:8]}"
        f" (1 passed before; 1 failed after (before: {after[:8]}), recorded "
    )
    assert err.rstrip().endswith("pass --replace to replace it")
    code, out, err = run([*argv, "--replace", "--json"], capsys)  # the file it wrote reads back
    doc = json.loads(out)
    assert code == 1 and doc["replaced"]["before"] == after and doc["replaced"]["ok"] is False, err
    assert doc["notes"] == [
        f"replaced the matrix 'regression matrix' recorded at {doc['evidence_head'][:8]}"
        f" (1 passed before; 1 failed after (before: {after[:8]}), recorded {doc['replaced']['recorded_at']})"
    ]


@pytest.mark.slow
def test_a_node_id_found_nowhere_is_a_warning_shown_as_typed(fix: tuple[Repo, str, str], capsys) -> None:
    typo = "tests/test_calc.py::test_[red]add[/red]"  # markup for the terminal: shown, never obeyed
    code, out, err = run([*REGRESS, "--test", "tests/test_calc.py::test_add", "--test", typo], capsys)
    assert code == 0, err
    assert "recorded regression matrix: 1 failed before; 1 passed after" in out
    assert err.strip() == f"warning: {typo}: not found before or after"


def test_the_phrase_reads_as_the_seed() -> None:
    before = {f"t{i}": "failed" for i in range(6)} | {"t6": "passed", "t7": "passed"}
    after = {f"t{i}": "passed" for i in range(8)}
    rec = RegressRecord("m", "a" * 40, "b" * 40, matrix(before, after))
    assert regress_phrase(rec).startswith(
        "6 failed, 2 passed before; 8 passed after; 2 passed before and after"
    )
    assert rec.ok and rec.not_proving == ("t6", "t7")
    gone = RegressRecord("m", "a" * 40, "b" * 40, matrix({"x": "passed"}, {}))
    assert regress_phrase(gone) == "1 passed before; 1 not present after" and not gone.ok


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--test", "../outside.py"],
            "--test '../outside.py': expected a pytest node id inside the repository",
        ),
        (["--test", "-p=evil"], "--test '-p=evil': expected a pytest node id"),
        (["--test", "/etc/x.py"], "expected a pytest node id"),
        (["--test", "t.py::a\nb"], "expected a pytest node id"),
        (["--test", "t.py", "--python", "bin/python"], "--python 'bin/python': expected an absolute path"),
        (["--test", "t.py", "--python", "/nonexistent/python"], "not an executable file"),
        (["--test", "t.py", "--timeout", "0"], "--timeout 0: expected seconds"),
        (["--test", "t.py", "--name", "a\x1bb"], "--name"),
        ([], "--test: name at least one test"),
    ],
)
def test_bad_flags_are_refused(fix: tuple[Repo, str, str], capsys, args: list[str], needle: str) -> None:
    code, _, err = run([*REGRESS, *args], capsys)
    assert code == 2 and needle in " ".join(err.split()), err
    assert not (fix[0].path / "sop").exists()


def test_an_interpreter_inside_the_checkout_is_refused(fix: tuple[Repo, str, str], capsys) -> None:
    python = fix[0].path / "venv/bin/python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    code, _, err = run([*REGRESS, "--test", "t.py", "--python", str(python)], capsys)
    assert code == 2 and "inside the checkout" in err


def test_an_untrusted_checkout_is_refused(fix, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, _, err = run([*REGRESS, "--test", "tests/test_calc.py"], capsys)
    assert code == 2 and "sop regress runs the repository's own code: refused in an untrusted checkout" in err


OPS_BEFORE = """\
import pytest


def sub(a, b):
    return a + b


class TestOps:
    def test_sub(self):
        assert sub(3, 1) == 2


@pytest.mark.parametrize(("a", "b"), [(1, 2)])
def test_pow(a, b):
    assert a**b == 1
"""
OPS_AFTER = (
    OPS_BEFORE.replace("return a + b", "return a - b").replace(
        "        assert sub(3, 1) == 2\n",
        "        assert sub(3, 1) == 2\n\n    def test_new_b(self):\n        pass\n",
    )
    + "\n\ndef test_new_a():\n    pass\n"
)
SESSIONS = """\
import os


def pytest_sessionfinish(session):
    with open(os.environ["REGRESS_SESSIONS"], "a") as fh:
        fh.write("session\\n")
"""


@pytest.mark.slow
def test_named_ids_three_of_five_new_take_two_runs_a_side(tmp_path: Path, monkeypatch, capsys) -> None:
    """Classes, parametrized ids and a folder's pytest.ini: the rows are the node ids named, and
    the three tests the fix adds cost no run of their own (collect, then run: two a side)."""
    repo = Repo(tmp_path / "r")
    files = {"tests/conftest.py": SESSIONS, "tests/pytest.ini": "[pytest]\n", "tests/test_ops.py": OPS_BEFORE}
    repo.commit("broken sub", files)
    after = repo.commit(
        "fix sub",
        {**files, "tests/test_ops.py": OPS_AFTER, "tests/test_more.py": "def test_new_c():\n    pass\n"},
    )
    sessions = tmp_path / "sessions"
    monkeypatch.setenv("REGRESS_SESSIONS", str(sessions))
    monkeypatch.chdir(repo.path)
    named = [
        "tests/test_ops.py::TestOps::test_sub",
        "tests/test_ops.py::test_pow[1-2]",
        "tests/test_ops.py::test_new_a",
        "tests/test_ops.py::TestOps::test_new_b",
        "tests/test_more.py::test_new_c",
    ]
    code, out, err = run([*REGRESS, *[a for t in named for a in ("--test", t)], "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)["record"]
    assert {c["test"]: (c["before"], c["after"]) for c in rec["cases"]} == {
        named[0]: ("failed", "passed"),
        named[1]: ("passed", "passed"),
        named[2]: ("missing", "passed"),
        named[3]: ("missing", "passed"),
        named[4]: ("missing", "passed"),
    }
    assert rec["sha"] == after and rec["not_present_before"] == sorted(named[2:])
    assert sessions.read_text().count("session") == 4  # collect and run, before and after
    # the report's Validation lines name them too, from the record as stored
    evidence = load_evidence(repo.path, "fix", head=after, evidence_head=after)
    text = "\n".join(render_evidence(evidence))
    assert "  - Not present before: `tests/test_more.py::test_new_c`, `tests/test_ops.py::Te" in text
    assert "  - Pass before and after (do not prove the fix): `tests/test_ops.py::test_pow[1-2]`." in text


HOSTILE_IDS = """\
import pytest


@pytest.mark.parametrize("v", [1], ids=["`<b>@here</b>|" + "x" * 300])
def test_long(v):
    pass
"""


@pytest.mark.slow
def test_a_hostile_node_id_is_cut_and_escaped(tmp_path: Path, monkeypatch, capsys) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("a", {"tests/test_h.py": HOSTILE_IDS})
    after = repo.commit("b", {"README": "b\n"})
    monkeypatch.chdir(repo.path)
    code, out, err = run([*REGRESS, "--test", "tests/test_h.py", "--json"], capsys)
    assert code == 0, err
    ((case, before, now),) = [
        (c["test"], c["before"], c["after"]) for c in json.loads(out)["record"]["cases"]
    ]
    # the id as this pytest names it (the scheme changes between pytest releases), cut to 200
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_h.py"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    (full,) = [ln for ln in collected if ln.startswith("tests/test_h.py::")]
    assert len(full) > 200 and "`" in full and "<b>" in full  # hostile as pytest names it
    assert case == full[:199] + "…"
    assert (before, now) == ("passed", "passed")
    evidence = load_evidence(repo.path, "fix", head=after, evidence_head=after)
    (line,) = [ln for ln in render_evidence(evidence) if "Pass before and after" in ln]
    assert line == f"  - Pass before and after (do not prove the fix): ``{case}``."  # one code span


@pytest.mark.parametrize(
    ("conftest", "needle"),
    [
        # the repository's conftest overwrites what our collection plugin wrote
        (
            "def pytest_sessionfinish(session):\n    open(sys.argv[1], 'w').write('[1, 2]')\n",
            "or not node ids",
        ),
        (
            "def pytest_sessionfinish(session):\n    open(sys.argv[1], 'w').write('[' * 100000)\n",
            "collected node ids",
        ),
        # ... or writes it first: ours cannot, and the collection run fails
        ("open(sys.argv[1], 'w').close()\n", "pytest before ("),
    ],
)
@pytest.mark.slow
def test_a_conftest_tampering_with_the_collection_is_one_line(
    tmp_path: Path, monkeypatch, capsys, conftest: str, needle: str
) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit(
        "a",
        {"tests/conftest.py": "import sys\n\n\n" + conftest, "tests/test_a.py": "def test_a():\n    pass\n"},
    )
    repo.commit("b", {"README": "b\n"})
    monkeypatch.chdir(repo.path)
    code, _, err = run([*REGRESS, "--test", "tests/test_a.py"], capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not (repo.path / "sop").exists()
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


# The "before" run is the repository's code too: a test there that plants a conftest.py and a
# pytest.ini in every folder above its worktree (inside our scratch folder) would make pytest at
# the head load them (pytest looks upward for both) and report a failing test as passed.
FORGE = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    report.outcome = "passed"
"""
DESELECT = "[pytest]\naddopts = --deselect tests/test_calc.py::test_add\n"
PLANT = """\
import pathlib


def test_plants():
    here = pathlib.Path(__file__).resolve().parent.parent  # the worktree
    for folder in here.parents:
        for name, text in FILES.items():
            (folder / name).write_text(text)
        if folder.name.startswith("vimesync-regress-"):
            break
    else:
        raise AssertionError("not in vimesync's scratch folder")
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "files",
    [{"pytest.ini": "[pytest]\n", "conftest.py": FORGE}, {"pytest.ini": DESELECT}],
    ids=["forged-outcomes", "deselected"],
)
def test_the_before_run_cannot_plant_config_for_the_head_run(
    tmp_path: Path, capsys, monkeypatch, files: dict[str, str]
) -> None:
    repo = Repo(tmp_path / "r")
    plant = f"FILES = {files!r}\n" + PLANT
    repo.commit("plants", {"calc.py": FIXED, "tests/test_calc.py": TESTS, "tests/test_plant.py": plant})
    repo.commit("breaks add", {"calc.py": BROKEN, "tests/test_plant.py": None})
    monkeypatch.chdir(repo.path)
    argv = [*REGRESS, "--test", "tests/test_plant.py", "--test", "tests/test_calc.py::test_add", "--json"]
    code, out, err = run(argv, capsys)
    assert code == 1, out + err
    cases = {c["test"]: (c["before"], c["after"]) for c in json.loads(out)["record"]["cases"]}
    assert cases["tests/test_calc.py::test_add"] == ("passed", "failed")
    assert cases["tests/test_plant.py::test_plants"] == ("passed", "missing")


FORGED_JUNIT = """\
import os


def test_forges(request):
    path = request.config.option.xmlpath
    open({seen!r}, "w").write(path)
    with open(path, "w") as f:
        f.write('<testsuite><testcase classname="tests.test_calc" name="test_add"/></testsuite>')
    os._exit(1)
"""


@pytest.mark.slow
def test_a_junit_file_forged_by_a_test_is_not_recorded(tmp_path: Path, capsys, monkeypatch) -> None:
    """A test that writes its own JUnit file at the path we pass and ends pytest there: the file is
    in a folder of ours outside the worktree, and a status that disagrees with it is refused."""
    seen = tmp_path / "junit-path"
    repo = Repo(tmp_path / "r")
    repo.commit("fixed", {"calc.py": FIXED, "tests/test_calc.py": TESTS})
    repo.commit("breaks add", {"calc.py": BROKEN, "tests/test_forge.py": FORGED_JUNIT.format(seen=str(seen))})
    monkeypatch.chdir(repo.path)
    argv = [*REGRESS, "--test", "tests/test_forge.py", "--test", "tests/test_calc.py::test_add"]
    code, out, err = run(argv, capsys)
    assert code == 2 and "its exit status (1) and its JUnit file disagree; not recorded" in err, out + err
    junit = Path(seen.read_text())
    assert "vimesync-regress-" in str(junit) and junit.parent.name.startswith("after-")
    assert not (repo.path / "sop").exists()


def test_the_worktree_own_pytest_config_is_the_one_taken(tmp_path: Path) -> None:
    from vimesync.app.regress import pytest_config

    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # above the worktree: never
    assert pytest_config(tree, ["tests/test_a.py::t"]) is None
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no pytest section
    assert pytest_config(tree, ["tests/test_a.py"]) is None
    (tree / "setup.cfg").write_text("[metadata]\n\n[tool:pytest]\naddopts = -q\n")
    assert pytest_config(tree, ["tests/test_a.py"]) == tree / "setup.cfg"
    (tree / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-q'\n")
    assert pytest_config(tree, ["tests/test_a.py"]) == tree / "pyproject.toml"
    (tree / "tests/pytest.ini").symlink_to(tmp_path / "pytest.ini")  # a symlink: not taken
    assert pytest_config(tree, ["tests/test_a.py"]) == tree / "pyproject.toml"
    (tree / "tests/pytest.ini").unlink()
    (tree / "tests/pytest.ini").write_text("[pytest]\n")  # nearest first, as pytest looks
    assert pytest_config(tree, ["tests/test_a.py", "tests/test_b.py"]) == tree / "tests/pytest.ini"
    assert pytest_config(tree, ["tests/test_a.py", "other/test_c.py"]) == tree / "pyproject.toml"


WRITES_THE_RECORDS = """\
import pathlib


def test_writes():
    records = pathlib.Path({records!r})
    records.parent.mkdir(parents=True, exist_ok=True)
    records.write_text(FORGED)
"""


@pytest.mark.slow
def test_a_test_writing_the_checkout_records_leaves_nothing_recorded(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """A test of the head that writes a record into the checkout's sop/records/ (the checkout
    is found from any worktree's .git file): what we would add to that file is not ours."""
    repo = Repo(tmp_path / "r")
    records = repo.path / "sop/records/fix.toml"
    forged = '[tests."all".' + "f" * 40 + "]\npassed = 999\nfailed = 0\n"
    source = f"FORGED = {forged!r}\n" + WRITES_THE_RECORDS.format(records=str(records))
    repo.commit("fixed", {"calc.py": FIXED, "tests/test_calc.py": TESTS})
    repo.commit("writes", {"tests/test_writes.py": source})
    monkeypatch.chdir(repo.path)
    code, out, err = run([*REGRESS, "--test", "tests/test_writes.py"], capsys)
    assert code == 2 and "fix.toml changed while pytest ran: nothing recorded" in err, out + err
    assert "regress" not in records.read_text()


@pytest.mark.parametrize("before", ["HEAD^{tree}", "-p", "--output=x", "HEAD:calc.py", "no-such-rev"])
def test_a_before_that_is_not_a_commit_is_refused(fix: tuple[Repo, str, str], capsys, before: str) -> None:
    argv = ["sop", "regress", "--sync", "fix", f"--before={before}", "--test", "tests/test_calc.py"]
    code, _, err = run(argv, capsys)
    assert code == 2 and ("is not a revision" in err or "unknown revision" in err), err
    assert "Traceback" not in err and not (fix[0].path / "sop").exists() and not (fix[0].path / "x").exists()


LOUD_CONFTEST = """\
import os
import time


def pytest_terminal_summary():  # the real stdout (capture is off): 40 MiB, over a second or two
    for _ in range(40):
        os.write(1, b"x" * (1 << 20) + b"\\n")
        time.sleep(0.03)
"""
QUIET_TEST = "def test_quiet():\n    assert NOW\n"


@pytest.mark.slow
def test_a_suite_printing_without_end_is_not_stopped(tmp_path: Path, monkeypatch, capsys) -> None:
    """pytest's output goes through the one runner's bounded tail: 40 MiB of it (past the 32 MiB
    cap of a tool run) is not a reason to stop the matrix."""
    repo = Repo(tmp_path / "r")
    files = {"conftest.py": LOUD_CONFTEST, "tests/test_quiet.py": QUIET_TEST.replace("NOW", "False")}
    repo.commit("a failing test, a loud suite", files)
    after = repo.commit("the fix", {"tests/test_quiet.py": QUIET_TEST.replace("NOW", "True")})
    monkeypatch.chdir(repo.path)
    code, out, err = run([*REGRESS, "--test", "tests/test_quiet.py", "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)["record"]
    assert rec["sha"] == after
    assert [(c["before"], c["after"]) for c in rec["cases"]] == [("failed", "passed")]
