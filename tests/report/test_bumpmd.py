"""``pin bump --format markdown``: a pull-request body (Renovate style) read back with a GFM parser:
the verdict table, what is refreshed/dropped/needs a hand, and the engine changelog between the
pins on the patched files, with hostile upstream subjects that must not break a table or ping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gfm import html, tables
from tests.builders.stack import ENGINE, Stack

REPO = "eng-org/eng"
HOSTILE = "Fix f10 | `x` <img src=x onerror=alert(1)> @someone closes #9 ``|`` ]]> (#22)"


def _core(edits: dict[int, str], head: str = "") -> str:
    return head + "".join(edits.get(i, f"def f{i}(x):\n    return x + {i}\n\n\n") for i in range(30))


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("moves.patch", {"eng/core.py": _core({25: "def f25(x):\n    return x * 25\n\n\n"})})
    both = {25: "def f25(x):\n    return x * 25\n\n\n", 10: "def f10(x):\n    return x * 10\n\n\n"}
    s.add("conflict.patch", {"eng/core.py": _core(both)})
    ours = ENGINE["eng/util.py"].replace("getcwd()", "getcwd()  # ours")
    s.add("upstreamed.patch", {"eng/util.py": ours})
    repo = s.repo
    repo.branch("up", s.pin)
    head = "".join(f"# {i}\n" for i in range(5))
    repo.commit("Insert a header (#21)", {"eng/core.py": _core({}, head)})
    repo.commit(HOSTILE, {"eng/core.py": _core({10: "def f10(x):\n    return x - 10\n\n\n"}, head)})
    repo.commit("Upstream the util change (#23)", {"eng/util.py": ours})
    repo.commit("Readme (#24)", {"README.md": "engine 2\n"})
    repo.git("tag", "v2")
    repo.checkout("main")
    return s


def _bump(s: Stack, *more: str, to: str = "v2") -> list[str]:
    return [
        "pin", "bump", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series"),
        "--to", to, *more,
    ]  # fmt: skip


def test_the_body_renders_with_whole_tables_and_a_changelog(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *_bump(stack, "--engine-repo", REPO, "--format", "markdown"))
    assert code == 1, err  # one patch conflicts at v2
    verdicts, changelog = tables(out)
    assert verdicts[0][0] == "Patch" and len(verdicts) == 4 and all(len(r) == 4 for r in verdicts)
    rows = {r[0]: r for r in verdicts[1:]}
    assert "offsets ±5" in rows["`moves.patch`"][2] and "+5" in rows["`moves.patch`"][3]
    assert "conflicts" in rows["`conflict.patch`"][2] and "already applied" in rows["`upstreamed.patch`"][2]
    assert changelog[0] == ["Commit", "PR", "Subject", "Touches", "Patches"]
    assert len(changelog) == 4 and all(len(r) == 5 for r in changelog)
    upstreamed, hostile, header = changelog[1:]
    assert "[eng-org/eng#23](https://github.com/eng-org/eng/pull/23)" == upstreamed[1]
    assert upstreamed[3] == "the same lines" and upstreamed[4] == "`upstreamed.patch`"
    assert hostile[3] == "the same lines" and hostile[4] == "`conflict.patch`"
    assert "onerror" in hostile[2] and hostile[2].endswith("(`#22`)")  # all of it in its one cell
    assert "`#9`" in hostile[2] and "closes [" not in out  # no link after a closing keyword
    assert header[3] == "the same file" and "Readme" not in out
    page = html(out)
    assert "<img" not in page and "@someone" not in out.replace("<code>@someone</code>", "")
    assert "**Needs a hand:**" in out and "conflict.patch" in out.split("**Needs a hand:**")[1]
    assert "**Dropped (already in `" in out


def test_refresh_lists_what_it_rewrote_and_dropped_and_json_has_the_changelog(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, *_bump(stack, "--json"))
    doc = json.loads(out)
    assert [c["pr"] for c in doc["changelog"]] == [23, 22, 21] and doc["changelog_left_off"] == 0
    work = str(tmp_path / "work")
    code, out, err = run(capsys, *_bump(stack, "--refresh", "--conflicts", work, "--format", "markdown"))
    assert code == 1, err
    refreshed = out.split("**Refreshed:**")[1].split("**")[0]
    dropped = out.split("**Dropped (already in `")[1].split("**", 1)[1].split("**")[0]
    assert "`moves.patch`" in refreshed and "`upstreamed.patch`" in dropped
    assert "`#23`" in out  # no repository known: the PR number as code, never a wrong link


def test_a_new_pin_outside_the_git_source_has_no_changelog_and_says_so(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "release"
    stack.repo.git("worktree", "add", "-q", str(folder), "v2")
    code, out, _ = run(capsys, *_bump(stack, "--format", "markdown", to=str(folder)))
    assert "Engine changelog" not in out and "no engine changelog" in out
    assert len(tables(out)) == 1


def test_a_bad_engine_repo_is_bad_input(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *_bump(stack, "--engine-repo", "not a repo", "--format", "markdown"))
    assert code == 2 and "--engine-repo" in err


def test_a_bump_where_no_patch_applies_claims_no_parse_and_names_the_tag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 29 item 17: "2,859 patched files parse" after 0 of 4 patches applied; the target named
    # by its sha only; "1 of 1 patch need a hand".
    s = Stack(tmp_path)
    s.add("only.patch", {"eng/core.py": _core({10: "def f10(x):\n    return x * 10\n\n\n"})})
    s.repo.branch("up", s.pin)
    s.repo.commit("Rewrite f10", {"eng/core.py": _core({10: "def f10(x):\n    return x - 10\n\n\n"})})
    s.repo.git("tag", "v2")
    s.repo.checkout("main")
    sha = s.repo.git("rev-parse", "v2").strip()[:12]
    code, out, err = run(capsys, *_bump(s, "--format", "markdown"))
    assert code == 1, err
    assert "1 of 1 patch needs a hand" in out
    assert f"At `{sha}`: 0 of 1 patch applied: nothing patched to parse, not checked." in out
    assert "files parse" not in out
    code, out, err = run(capsys, *_bump(s))
    assert code == 1, err
    assert f"to v2 ({sha}): git" in out
    assert f"At {sha}: 0 of 1 patch applied: nothing patched to parse, not checked.\n" in out
    assert f"NEEDS WORK: 1 of 1 patch conflicts at v2 ({sha})." in out
