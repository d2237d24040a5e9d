"""The rest of the human outputs under hostile text: report (Markdown on stdout and --output),
demo (its folder named by the user), init (names and paths it echoes); tables never wrap a row
when piped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gitrepo import Repo
from tests.builders.hostile import CONTROLS, MARKUP, SHOWN, assert_inert
from vimesync.config import load_config

pytestmark = pytest.mark.slow  # the demo and reports end to end

PATH_MARKUP = MARKUP.replace("https://x", "x")  # a path has no "//"


@pytest.fixture()
def repos(tmp_path: Path) -> tuple[Repo, Repo]:
    up = Repo(tmp_path / "up")
    base = up.commit("start", {"slime/a.py": "a = 1\n"})
    up.commit(f"Fix {MARKUP} {CONTROLS} @alice cc @org/team (#7)", {"slime/a.py": "a = 2\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {"vime/a.py": "a = 1\n"})
    down.commit("sync", {f"vime/{PATH_MARKUP} {CONTROLS}.py": "b = 1\n"})
    (tmp_path / "base").write_text(base)
    return up, down


def test_report_markdown_on_stdout_and_in_a_file(
    repos: tuple[Repo, Repo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    up, down = repos
    base = (tmp_path / "base").read_text()
    args = ["report", "--upstream", str(up.path), "--range", f"{base}..HEAD", "--downstream", str(down.path)]
    args += ["--baseline", "HEAD~1", "--sync", "s"]
    code, out, err = run(capsys, *args)
    assert code == 1, err  # the changed path is not reviewed
    assert_inert(out + err)
    assert "@alice" not in out.replace("<code>@alice</code>", "")
    assert "\\x1b" in out  # the ESC is shown, not sent
    target = tmp_path / "sync.md"
    code, _, err = run(capsys, *args, "--output", str(target))
    assert code == 1, err
    written = target.read_text()
    assert written == out  # --output writes what stdout shows: mentions neutralised there too
    assert "<code>@alice</code>" in written and "<code>@org/team</code>" in written


def test_demo_in_a_folder_whose_name_is_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / f"{PATH_MARKUP} {CONTROLS}"
    code, out, err = run(capsys, "demo", "--keep", str(folder))
    assert code == 0, err
    assert_inert(out + err)
    assert f"{PATH_MARKUP} {' '.join(SHOWN)}" in err  # where the example is, shown as text


def test_init_echoes_names_and_paths_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    up = Repo(tmp_path / f"{PATH_MARKUP} up")
    up.commit("start", {"a.py": "a\n"})
    Repo(tmp_path / "down")
    monkeypatch.chdir(tmp_path / "down")
    engine = f"{MARKUP} {CONTROLS}"
    code, out, err = run(capsys, "init", "--upstream", str(up.path), "--engine", engine)
    assert code == 0, err
    assert_inert(out + err)
    assert f"{tmp_path}/{PATH_MARKUP} up" in load_config(cwd=tmp_path / "down").upstream_path.as_posix()  # type: ignore[union-attr]
    assert load_config(cwd=tmp_path / "down").engine.name == engine  # written escaped, read back exact
    code, out, err = run(capsys, "init", "--force", "--upstream", f"../x{CONTROLS}")
    assert code == 2 and "control character" in err
    assert_inert(out + err)


def test_a_piped_table_fits_80_columns_or_columns_when_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped with no $COLUMNS a table is laid out for 80 columns (a long title wraps between its
    words); with $COLUMNS as wide as it needs, each row is one line (for grep); --json is whole."""
    up = Repo(tmp_path / "up")
    up.commit("start", {"a.py": "a\n"})
    title = "fix: " + " ".join(f"word{i}" for i in range(40))  # far wider than 80 columns
    up.commit(f"{title} (#9)", {"a.py": "b\n"})
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, err = run(capsys, "walk", "--upstream", str(up.path), "--range", "HEAD~1..HEAD")
    assert code == 0, err
    rows = [line for line in out.splitlines() if "word" in line]
    assert len(rows) > 1 and all(len(line) <= 80 for line in rows)
    assert all(f"word{i}" in out.split() for i in range(40))  # no word cut
    monkeypatch.setenv("COLUMNS", "400")
    code, out, err = run(capsys, "walk", "--upstream", str(up.path), "--range", "HEAD~1..HEAD")
    assert code == 0, err
    assert any(title in line for line in out.splitlines())
    code, out, err = run(capsys, "walk", "--upstream", str(up.path), "--range", "HEAD~1..HEAD", "--json")
    assert json.loads(out)["prs"][0]["title"] == title
