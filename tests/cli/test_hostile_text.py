"""Text from commits, files, paths and config in every command's human output: shown literally,
never read as rich markup (no MarkupError, no swallowed ``[str]``), control characters shown
escaped (no raw ESC, CR or bidi override reaches the terminal), exit codes unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gitrepo import Repo
from tests.builders.hostile import CONTROLS, MARKUP, SHOWN, assert_inert
from tests.builders.stack import ENGINE, Stack


def flat(text: str) -> str:
    return " ".join(text.split())


def test_walk_titles_and_upstream_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = Repo(tmp_path / "r")
    r.commit("start", {"README.md": "x\n"})
    r.commit(f"Fix {MARKUP} {CONTROLS} (#7)", {"a.py": "a\n"})
    r.commit(f"direct {MARKUP} {CONTROLS}", {"b.py": "b\n"})
    (tmp_path / "vimesync.toml").write_text('[upstream]\nname = "[bold]up[/tmp] \\u001b[2J"\n')
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", "HEAD~2..HEAD")
    assert code == 0, err
    assert_inert(out + err)
    assert "[bold]up[/tmp] \\x1b[2J" in out
    # Wrapped in a table cell: compare without the layout.
    joined = "".join(out.split())
    assert "".join(MARKUP.split()) in joined
    for shown in SHOWN:
        assert shown in joined
    assert f"direct {MARKUP} {' '.join(SHOWN)}" in flat(out)
    code, out, _ = run(capsys, "walk", "--upstream", str(r.path), "--range", "HEAD~2..HEAD", "--json")
    assert code == 0 and out.isascii()
    titles = [pr["title"] for pr in json.loads(out)["prs"]]
    assert titles == [f"Fix {MARKUP} {CONTROLS}"]  # JSON keeps the exact text, escaped by JSON


@pytest.mark.slow
def test_patches_check_hunk_lines_paths_and_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    s = Stack(tmp_path)
    hostile = f'SEP = re.compile(r"[/\\\\]")  # [/tmp] {MARKUP} {CONTROLS}\n'
    name = "0001-[bold]x[red][link=x].patch"
    s.add(name, {"eng/util.py": hostile + ENGINE["eng/util.py"] + "X = 1\n"})
    s.add("0002-second.patch", {"eng/[red]x[link=y].py": "Y = 2\n"})
    drifted = s.drift({"eng/util.py": "list[str] = get_field([/tmp]\x1b[0m)\n" + ENGINE["eng/util.py"]})
    series = str(s.dir / "series")
    args = ["patches", "check", "--source", str(s.repo.path), "--rev", drifted, "--series", series]
    code, out, err = run(capsys, *args)
    assert code == 1, err
    assert_inert(out + err)
    assert name in out  # table cell and failure line
    assert "found:    'list[str] = get_field([/tmp]\\x1b[0m)\\n'" in out
    code, out, err = run(capsys, *args, "--keep-going")
    assert code == 1, err
    assert_inert(out + err)
    code, out, _ = run(capsys, *args, "--json")
    assert code == 1 and out.isascii() and json.loads(out)["ok"] is False
    # At its own pin the stack applies; the CR in the comment ends it, so util.py does not parse:
    # the parse failure (path and message) prints as text too.
    args = ["patches", "check", "--source", str(s.repo.path), "--rev", s.pin, "--series", series]
    code, out, err = run(capsys, *args)
    assert code == 1, err
    assert_inert(out + err)
    assert "eng/util.py:2: SyntaxError" in out and "1 Python file does not parse" in out


def test_audit_paths(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    up = Repo(tmp_path / "up")
    up.commit("upstream", {"slime/a.py": "a = 2\n"})
    down = Repo(tmp_path / "down")
    markup = MARKUP.replace("https://x", "x")  # a path has no "//"
    path = f"vime/{markup} {CONTROLS}.py"
    down.commit("baseline", {"README.md": "x\n"})
    down.commit("sync", {path: "a = 3\n"})
    args = ["audit", "--downstream", str(down.path), "--upstream", str(up.path), "--sync", "s"]
    code, out, err = run(capsys, *args, "--baseline", "HEAD~1")
    assert code == 1, err
    assert_inert(out + err)
    assert f"{markup} {' '.join(SHOWN)}.py" in out
    code, out, _ = run(capsys, *args, "--baseline", "HEAD~1", "--json")
    assert code == 1 and out.isascii() and json.loads(out)["unreviewed"] == [path]


def test_errors_and_report_messages(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    markup = MARKUP.replace("https://x", "x")  # a path has no "//"
    missing = tmp_path / f"{markup} {CONTROLS}.toml"
    code, out, err = run(capsys, "walk", "--config", str(missing))
    assert code == 2 and out == ""
    assert_inert(err)
    assert f"{markup} {' '.join(SHOWN)}.toml" in err
    code, out, err = run(capsys, "walk", "--config", str(missing), "--json")
    assert code == 2 and out.isascii() and json.loads(out)["exit_code"] == 2
    assert_inert(err)


@pytest.mark.slow
@pytest.mark.parametrize("misbehaviour", ["lists", "redirect", "endless"])
def test_a_misbehaving_github_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, misbehaviour: str
) -> None:
    from tests.builders.fakegithub import TOKEN, FakeGitHub, serve

    r = Repo(tmp_path / "r")
    r.commit("start", {"README.md": "x\n"})
    r.commit("Add a (#1)", {"a.py": "a\n"})
    config = tmp_path / "vimesync.toml"
    config.write_text('[upstream]\nrepo = "THUDM/slime"\n')
    fake = FakeGitHub(range(1, 3))
    with serve(FakeGitHub(range(1, 2))) as elsewhere, serve(fake) as url:
        fake.lists = {"message": "an object"} if misbehaviour == "lists" else None
        fake.redirect = f"{elsewhere}/steal" if misbehaviour == "redirect" else None
        fake.endless = misbehaviour == "endless"
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        args = [
            "walk",
            "--upstream",
            str(r.path),
            "--range",
            "HEAD~1..HEAD",
            "--github",
            "--config",
            str(config),
        ]
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "" and err.startswith("error: ") and "Traceback" not in err
        assert TOKEN not in err
        code, out, err = run(capsys, *args, "--json")
        assert code == 2 and json.loads(out)["exit_code"] == 2 and TOKEN not in out + err
