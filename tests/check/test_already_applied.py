"""``patches check`` on a source that already holds (some of) the stack, index drift against the
pin and across the stack, and DEP-3 ``Applied-Upstream`` commits the git pin contains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from vimesync import git
from vimesync.check.model import check_to_dict
from vimesync.check.run import run_check
from vimesync.report.build import ReportParts, build_report
from vimesync.report.enginemd import render_engine
from vimesync.report.validationmd import render_validation

CORE = ENGINE["eng/core.py"]


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("0001-core.patch", {"eng/core.py": CORE.replace("return x + 3\n", "return x + 3  # one\n")})
    s.add("0002-util.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def test_an_already_patched_source_says_so_for_every_patch(stack: Stack) -> None:
    tip = stack.repo.head()  # every patch is a commit: the tip is the patched tree
    report = run_check(stack.opts(rev=tip))
    assert [p.status for p in report.patches] == ["already-applied", "already-applied"]
    assert not report.ok  # without --keep-going an already-applied patch fails the check
    assert report.python is not None and report.python.ok  # the tree is what the stack makes
    kept = run_check(stack.opts(rev=tip, keep_going=True))
    assert kept.ok and len(kept.already_applied) == 2
    assert not run_check(stack.opts(rev=tip, keep_going=True, strict=True)).ok
    doc = check_to_dict(kept)
    assert [p["status"] for p in doc["patches"]] == ["already-applied"] * 2
    assert doc["patches"][0]["already_applied_hunks"] == 1


@pytest.mark.slow
def test_partly_applied_patch(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    both = CORE.replace("return x + 3\n", "return x + 3  # a\n").replace(
        "return x + 20\n", "return x + 20  # b\n"
    )
    s.add("0001-two.patch", {"eng/core.py": both})
    # upstream took the second change and moved the first one's context
    upstream = CORE.replace("return x + 20\n", "return x + 20  # b\n").replace("def f3(x):\n", "def f3(y):\n")
    report = run_check(s.opts(rev=s.drift({"eng/core.py": upstream}), keep_going=True))
    (p,) = report.patches
    assert p.status == "partly-applied" and p.already_applied == (("eng/core.py", 2),)
    (failure_doc,) = [f for f in check_to_dict(report)["patches"][0]["failures"] if f["already_applied"]]
    assert failure_doc["hunk"] == 2
    engine = build_report(ReportParts(check=report)).engine
    assert "partly applied in the pin (1 of 2 hunks)" in "\n".join(render_engine(engine))  # type: ignore[arg-type]


@pytest.mark.slow
def test_index_drift_against_the_pin_and_across_the_stack(stack: Stack) -> None:
    rev = stack.drift({"eng/core.py": CORE.replace("return x + 3\n", "return x + 33\n")})
    report = run_check(stack.opts(rev=rev, keep_going=True))
    (d,) = report.patches[0].drift
    pinned = git.run(stack.repo.path, ["rev-parse", f"{rev}:eng/core.py"]).decode().strip()
    made = git.run(stack.repo.path, ["rev-parse", f"{stack.pin}:eng/core.py"]).decode().strip()
    assert d.file == "eng/core.py" and d.by is None
    assert made.startswith(d.expected) and pinned.startswith(d.found)
    assert report.patches[1].drift == ()  # util.py is as the patch expects
    # a patch made against the pin, not against what the patch before it produced
    stack.repo.git("checkout", "-q", "-b", "side", stack.pin)
    stack.add("0003-side.patch", {"eng/core.py": CORE.replace("return x + 9\n", "return x + 9  # side\n")})
    ok = run_check(stack.opts())
    third = ok.patches[2]
    assert third.ok and [(d.file, d.by) for d in third.drift] == [("eng/core.py", "0001-core.patch")]


def test_index_drift_in_a_directory_source_hashes_like_git(stack: Stack, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git.run(stack.repo.path, ["worktree", "add", "-q", "--detach", str(tree), stack.pin])
    (tree / "eng/core.py").write_text(CORE.replace("return x + 3\n", "return x + 33\n"))
    (tree / ".git").unlink()  # a plain folder now
    report = run_check(stack.opts(source=tree, rev=None, keep_going=True))
    (d,) = report.patches[0].drift
    want = git.run(tmp_path, ["hash-object", "--no-filters", str(tree / "eng/core.py")]).decode().strip()
    assert want.startswith(d.found)


def test_applied_upstream_commit_in_the_pin_is_upstreamed(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\nX = 1\n"})
    landed = s.repo.head()
    header = f"Description: x\nApplied-Upstream: v2.0, commit:{landed[:10]}\n---\n"
    s.add("0002-b.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\nX = 1\nY = 2\n"}, header=header)
    at_pin = run_check(s.opts(keep_going=True))
    assert [p.upstreamed for p in at_pin.patches] == [None, None]  # the pin predates it
    at_tip = run_check(s.opts(rev=landed, keep_going=True))
    assert at_tip.patches[1].upstreamed == landed[:10]
    assert "upstreamed at" in "\n".join(render_engine(build_report(ReportParts(check=at_tip)).engine))  # type: ignore[arg-type]


@pytest.mark.slow
def test_cli_text_and_json_on_an_already_patched_tree(
    capsys: pytest.CaptureFixture[str], stack: Stack
) -> None:
    series = str(stack.dir / "series")
    args = [
        "patches",
        "check",
        "--source",
        str(stack.repo.path),
        "--rev",
        stack.repo.head(),
        "--series",
        series,
    ]
    code, out, _ = run(capsys, *args)
    assert code == 1
    assert out.count("already applied") >= 2 and "drop them from the series" in out
    code, out, _ = run(capsys, *args, "--keep-going")
    assert code == 0 and "drop them from the series" in out
    code, out, _ = run(capsys, *args, "--keep-going", "--strict", "--json")
    assert code == 1 and json.loads(out)["patches"][0]["status"] == "already-applied"
    lines = render_validation(run_check(stack.opts(rev=stack.repo.head())))
    assert any("already applied" in line and "drop it from the series" in line for line in lines)


@pytest.mark.parametrize(
    "value",
    ["--upload-pack=touch /tmp/pwned", "commit:" + "a" * 5000, "HEAD", "v1.2, https://x/commit/zzzz", ""],
)
def test_a_hostile_applied_upstream_names_no_commit(value: str) -> None:
    from vimesync.check.drift import applied_upstream_commit
    from vimesync.patches.model import Dep3

    assert applied_upstream_commit(Dep3(text="", fields=(("applied-upstream", value),))) is None


def test_applied_upstream_forms() -> None:
    from vimesync.check.drift import applied_upstream_commit
    from vimesync.patches.model import Dep3

    for value in ("v2.0, commit:ABCDEF1", "https://github.com/o/r/commit/abcdef1", "abcdef1"):
        assert applied_upstream_commit(Dep3(text="", fields=(("applied-upstream", value),))) == "abcdef1"


def test_the_report_says_which_patches_to_drop(stack: Stack) -> None:
    report = run_check(stack.opts(rev=stack.repo.head(), keep_going=True))
    (line,) = [x for x in render_validation(report) if "already applied" in x]
    assert "0 of 2 patches apply sequentially" in line and "2 are already applied there (drop them" in line


def test_drift_says_when_the_file_already_is_the_patch_result(stack: Stack) -> None:
    report = run_check(stack.opts(rev=stack.repo.head(), keep_going=True))
    assert all(d.is_result for p in report.patches for d in p.drift)
    assert len([d for p in report.patches for d in p.drift]) == 2
