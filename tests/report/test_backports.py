"""``pin radar --backports/--to``: the engine commits after a git pin that touch the stack's lines
or files, on a built engine history where the answer is known (a commit on the hunk's lines after
an earlier one moved them, one on the lines where they were, one elsewhere in the file, one on
another file, a PR merge), and the line-range arithmetic on its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gfm import html, tables
from tests.builders.stack import ENGINE, Stack
from vimesync.patches.diffparse import parse_patch
from vimesync.report.backports import Span, hunk_spans, map_span, overlaps, stack_lines

REPO = "eng-org/eng"


def _fn(i: int) -> str:
    return f"def f{i}(x):\n    return x + {i}\n\n\n"


def _core(edits: dict[int, str], head: str = "") -> str:
    return head + "".join(edits.get(i, _fn(i)) for i in range(30))


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Stack, dict[str, str]]:
    s = Stack(tmp_path)
    s.add("doc.patch", {"eng/core.py": _core({1: 'def f1(x):\n    """One."""\n    return x + 1\n\n\n'})})
    both = {
        1: 'def f1(x):\n    """One."""\n    return x + 1\n\n\n',
        20: "def f20(x):\n    return x * 20\n\n\n",
    }
    s.add("f20.patch", {"eng/core.py": _core(both)})
    s.add("util.patch", {"eng/util.py": ENGINE["eng/util.py"].replace("getcwd()", "getcwd()  # ours")})
    repo = s.repo
    repo.branch("up", s.pin)
    header = "".join(f"# header line {i}\n" for i in range(10))
    sh: dict[str, str] = {}
    sh["A"] = repo.commit("Header comment (#10)", {"eng/core.py": _core({}, header)})
    sh["B"] = repo.commit(
        "Change f20 (#11)", {"eng/core.py": _core({20: "def f20(x):\n    return x - 20\n\n\n"}, header)}
    )
    repo.commit("Readme only (#12)", {"README.md": "engine, documented\n"})
    later = {20: "def f20(x):\n    return x - 20\n\n\n", 28: "def f28(x):\n    return 28\n\n\n"}
    sh["D"] = repo.commit("Change f28 (#14)", {"eng/core.py": _core(later, header)})
    # f17's return is the line f20's hunk held at the pin, before A moved everything 10 down
    later[17] = "def f17(x):\n    return 17\n\n\n"
    sh["E"] = repo.commit("Change f17 (#15)", {"eng/core.py": _core(later, header)})
    repo.branch("side", "up")
    repo.commit(
        "util: say where", {"eng/util.py": ENGINE["eng/util.py"].replace("os.getcwd()", "os.getcwd() or '/'")}
    )
    repo.checkout("up")
    sh["F"] = repo.merge("side", "Merge pull request #13 from someone/side\n\nutil: say where")
    repo.checkout("main")
    return s, sh


@pytest.fixture()
def stack(built: tuple[Stack, dict[str, str]]) -> Stack:
    return built[0]


def _args(s: Stack, *more: str) -> list[str]:
    return [
        "pin", "radar", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series"),
        "--engine-repo", REPO, "--offline", *more,
    ]  # fmt: skip


def test_candidates_name_the_commits_on_the_patched_lines_newest_first(
    built: tuple[Stack, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    stack, sh = built
    code, out, err = run(capsys, *_args(stack, "--to", "up", "--json"))
    assert code == 0, err
    doc = json.loads(out)
    got = [(c["sha"], c["pr"], c["relation"], c["patches"], c["files"]) for c in doc["candidates"]]
    assert got == [
        (sh["F"], 13, "same-lines", ["util.patch"], ["eng/util.py"]),
        (sh["E"], 15, "same-file", ["doc.patch", "f20.patch"], ["eng/core.py"]),
        (sh["D"], 14, "same-file", ["doc.patch", "f20.patch"], ["eng/core.py"]),
        (sh["B"], 11, "same-lines", ["f20.patch"], ["eng/core.py"]),
        (sh["A"], 10, "same-file", ["doc.patch", "f20.patch"], ["eng/core.py"]),
    ]
    assert doc["candidates"][3]["subject"] == "Change f20 (#11)"
    assert doc["backports"] == {"to": "up", "tip": sh["F"], "read": 5, "total": 5, "left_off": 0}


def test_the_cap_says_how_many_were_left_off_and_every_format_shows_them(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--max-candidates", "2", "--json"))
    doc = json.loads(out)
    assert code == 0 and len(doc["candidates"]) == 2 and doc["backports"]["left_off"] == 3
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--max-candidates", "2"))
    assert code == 0 and "the same lines" in out and "3 more commits" in out
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--format", "markdown"))
    assert code == 0
    table = tables(out)[-1]
    assert table[0] == ["Commit", "PR", "Subject", "Touches", "Patches"]
    assert len(table) == 6 and all(len(r) == 5 for r in table)
    assert "[eng-org/eng#13](https://github.com/eng-org/eng/pull/13)" in table[1][1]


def test_backports_default_to_the_source_head(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    stack.repo.git("checkout", "-q", "up")  # HEAD: the default branch a mirror's HEAD names
    code, out, err = run(capsys, *_args(stack, "--backports", "--json"))
    assert code == 0, err
    assert json.loads(out)["backports"]["to"] == "HEAD" and len(json.loads(out)["candidates"]) == 5


def test_hostile_subjects_are_escaped_and_bounded(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    repo = stack.repo
    repo.checkout("up")
    subject = "x | `y` <script>alert(1)</script> @maintainer \x1b[31mred " + "z" * 5000 + " (#77)"
    text = ENGINE["eng/util.py"].replace("import os", "import os  # moved")
    repo.git("commit", "-q", "--allow-empty", "-m", "placeholder")
    repo.write({"eng/util.py": text})
    repo.git("commit", "-q", "--amend", "-m", subject + "\n\nbody | with\nlines")
    repo.checkout("main")
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--json"))
    top = json.loads(out)["candidates"][0]
    assert code == 0 and top["pr"] == 77 and top["relation"] == "same-lines"
    assert len(top["subject"]) <= 512 and top["subject"].endswith("(#77)")
    code, out, _ = run(capsys, *_args(stack, "--to", "up"))
    assert code == 0 and "\x1b" not in out
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--format", "markdown"))
    rows = tables(out)[-1]
    assert len(rows) == 7 and all(len(r) == 5 for r in rows)
    assert "#77" in rows[1][1] and "zzz" in rows[1][2]
    rendered = html(out)
    assert "<script>" not in rendered and "\x1b" not in out
    assert "@maintainer" not in out.replace("<code>@maintainer</code>", "")


def test_a_source_that_is_not_git_or_an_unknown_rev_is_bad_input(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "tree"
    folder.mkdir()
    (folder / "README.md").write_text("engine\n")
    args = ["pin", "radar", "--source", str(folder), "--series", str(stack.dir / "series")]
    code, _, err = run(capsys, *args, "--engine-repo", REPO, "--offline", "--backports")
    assert code == 2 and "--backports" in err and "git engine source" in err and "Traceback" not in err
    code, _, err = run(capsys, *_args(stack, "--to", "no-such-rev"))
    assert code == 2 and "--to" in err and len(err.strip().splitlines()) <= 2
    code, _, err = run(capsys, *_args(stack, "--max-candidates", "3"))
    assert code == 2 and "--max-candidates" in err


# ---------------------------------------------------------------------------------------------
# The arithmetic


def test_hunk_spans_and_insertions() -> None:
    assert hunk_spans((5, 2, 7, 3)) == (Span(5, 7), Span(7, 10))
    assert hunk_spans((5, 0, 6, 2)) == (Span(6, 6), Span(6, 8))  # adds after line 5
    assert hunk_spans((5, 2, 4, 0)) == (Span(5, 7), Span(5, 5))  # deletes lines 5-6


@pytest.mark.parametrize(
    ("span", "hunks", "moved"),
    [
        (Span(10, 15), [(1, 0, 2, 3)], Span(13, 18)),  # 3 lines added above
        (Span(10, 15), [(20, 1, 20, 4)], Span(10, 15)),  # a change below
        (Span(10, 15), [(2, 4, 2, 1)], Span(7, 12)),  # 3 lines fewer above
        (Span(10, 15), [(12, 1, 12, 3)], Span(10, 17)),  # inside: the span grows
        (Span(10, 15), [(8, 4, 8, 1)], Span(8, 12)),  # its start rewritten: from the new start
        (Span(10, 15), [(9, 0, 10, 2)], Span(12, 17)),  # an insertion right before it
        (Span(10, 15), [(14, 0, 15, 2)], Span(10, 15)),  # ...right after it: outside
        (Span(10, 15), [(10, 5, 9, 0)], Span(10, 10)),  # all of it deleted: the point
        (Span(10, 10), [(1, 0, 2, 2)], Span(12, 12)),
    ],
)
def test_map_span(span: Span, hunks: list[tuple[int, int, int, int]], moved: Span) -> None:
    assert map_span(span, [hunk_spans(h) for h in hunks]) == moved


def test_overlaps() -> None:
    span = Span(10, 15)
    assert overlaps(Span(14, 16), span) and overlaps(Span(1, 11), span)
    assert not overlaps(Span(15, 16), span) and not overlaps(Span(5, 10), span)
    assert overlaps(Span(12, 12), span) and not overlaps(Span(10, 10), span)
    assert overlaps(Span(9, 10), Span(10, 10)) and not overlaps(Span(8, 9), Span(10, 10))


def test_a_later_patch_is_measured_in_the_pins_numbering() -> None:
    first = b"--- a/f\n+++ b/f\n@@ -2,0 +3,3 @@\n+a\n+b\n+c\n"
    second = b"--- a/f\n+++ b/f\n@@ -20,2 +20,2 @@\n-x\n-y\n+X\n+Y\n"
    lines = stack_lines([parse_patch(first, name="one"), parse_patch(second, name="two")])
    assert lines.files == {"f": ("one", "two")}
    assert lines.spans["f"] == [(Span(3, 3), "one"), (Span(17, 19), "two")]


def test_an_empty_message_and_the_byte_caps_are_survived_and_said(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import vimesync.report.backports as backports

    repo = stack.repo
    repo.checkout("up")
    repo.write({"README.md": "engine, again\n", "eng/util.py": "import os\n"})
    repo.git("commit", "-q", "--allow-empty-message", "-m", "")
    repo.checkout("main")
    code, out, err = run(capsys, *_args(stack, "--to", "up", "--json"))
    top = json.loads(out)["candidates"][0]
    assert code == 0, err
    assert (top["subject"], top["pr"], top["relation"], top["files"]) == (
        "",
        None,
        "same-lines",
        ["eng/util.py"],
    )
    assert len(json.loads(out)["candidates"]) == 6
    # a diff over the per-commit cap is not parsed: it counts as touching every patched line
    monkeypatch.setattr(backports, "MAX_COMMIT_BYTES", 10)
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--json"))
    relations = [c["relation"] for c in json.loads(out)["candidates"]]
    assert code == 0 and relations[-1] == "same-lines"  # A: only a header added, now "same lines"
    # past the log's cap, the oldest commits read by then are used, and a note says so
    monkeypatch.setattr(backports, "MAX_LOG_BYTES", 200)
    code, out, err = run(capsys, *_args(stack, "--to", "up", "--json"))
    doc = json.loads(out)
    assert code == 0 and 0 < doc["backports"]["read"] < 6
    assert any(n.startswith("the log after the pin passed 200 bytes: only") for n in doc["notes"])


def test_closing_keywords_in_subjects_close_nothing(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    repo = stack.repo
    repo.checkout("up")
    repo.write({"eng/util.py": ENGINE["eng/util.py"].replace("import os", "import os  # again")})
    repo.git("commit", "-q", "-m", "Fixes #9, closes vime-org/vime#2 (#79)")
    repo.checkout("main")
    code, out, _ = run(capsys, *_args(stack, "--to", "up", "--format", "markdown"))
    assert code == 0 and "#79" in out
    line = next(ln for ln in out.splitlines() if "#79" in ln)
    assert "Fixes `#9`" in line and "closes <code>vime-org/vime#2</code>" in line, line
    assert "Fixes #9" not in html(out) and "closes vime-org/vime#2" not in html(out)


def test_an_engine_repository_whose_config_fetches_lazily_is_refused(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    """The radar reads the engine through the git choke point: a source configured to fetch
    missing objects from a promisor remote (a command git would run) is refused, naming the key."""
    config = stack.repo.path / ".git/config"
    config.write_text(
        config.read_text()
        + '[remote "origin"]\n\turl = https://example.invalid/eng.git\n\tpromisor = true\n'
        + "[extensions]\n\tpartialClone = origin\n"
    )
    code, out, err = run(capsys, *_args(stack, "--to", "up"))
    assert code == 2 and "refusing a repository that sets" in err and "lazy fetching" in err, err
    assert "example.invalid" not in out + err and "Traceback" not in err


@pytest.mark.parametrize("to", ["--output=OUT", "-p", "HEAD --all"])
def test_a_to_that_looks_like_an_option_never_reaches_git_as_one(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str], to: str
) -> None:
    out_file = tmp_path / "OUT"
    to = to.replace("OUT", str(out_file))
    code, _, err = run(capsys, *_args(stack, f"--to={to}"))
    assert code == 2 and "--to" in err and "Traceback" not in err, err
    assert not out_file.exists()
