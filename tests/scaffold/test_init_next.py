"""``vimesync init`` leads somewhere (issue 29, item 21): the first next step it prints runs as
printed, through a real shell, with what it wrote (a fresh fork, a fork that holds the upstream,
no clone yet); the renamed-package examples load once uncommented; ``.vimesync/`` is ignored
(created or appended, once, never through a symlink); ``--force`` removes the pins it no longer
writes (only init's own); the SOP names ``vimesync sync`` as the main path."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.shell import shell
from vimesync import git
from vimesync.cli.app import main
from vimesync.config import load_config
from vimesync.upstream.translate import load_transform


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def init_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run(capsys, "init", "--json", *args)
    assert code == 0, err
    return json.loads(out)


def _upstream(path: Path, branch: str = "main") -> Repo:
    up = Repo(path, branch=branch)
    up.commit("init", {"slime/a.py": "import slime\n"})
    up.commit("Add b (#2)", {"slime/b.py": "from slime import a\n"})
    return up


@pytest.mark.slow
@pytest.mark.parametrize("branch", ["main", "x$(touch${IFS}PWNED);`touch${IFS}PWNED`"])
def test_in_a_fresh_fork_the_printed_walk_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, branch: str
) -> None:
    _upstream(tmp_path / "slime", branch)
    fresh = tmp_path / "vime"
    fresh.mkdir()
    git.run(fresh, ["init", "-q"])
    monkeypatch.chdir(fresh)
    doc = init_json(capsys, "--upstream", "../slime", "--map", "slime/=vime/")
    first = doc["next"][0]
    assert first == f"vimesync walk --range {shlex.quote(branch)}"
    done = shell(first + " --json", fresh)
    assert done.returncode == 0, (first, done.stderr)
    assert [pr["number"] for pr in json.loads(done.stdout)["prs"]] == [2]
    assert not list(tmp_path.rglob("PWNED"))
    assert doc["next"][-1] == "vimesync sync"
    assert "`vimesync sync`" in (fresh / "sop/SYNC.md").read_text().split("## 0. Prepare")[0]


@pytest.mark.slow
def test_in_a_fork_that_holds_the_upstream_the_printed_walk_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    up = _upstream(tmp_path / "slime")
    down = Repo(tmp_path / "vime")
    pack = git.run(up.path, ["pack-objects", "--revs", "--stdout", "-q"], input=f"{up.head()}\n".encode())
    git.run(down.path, ["index-pack", "--stdin"], input=pack)
    down.git("reset", "-q", "--hard", up.head())
    up.commit("Add c (#3)", {"slime/c.py": "c = 3\n"})
    monkeypatch.chdir(down.path)
    doc = init_json(capsys, "--upstream", "../slime")
    assert doc["next"][0] == "vimesync walk"
    done = shell(doc["next"][0] + " --json", down.path)
    assert done.returncode == 0, done.stderr
    assert [pr["number"] for pr in json.loads(done.stdout)["prs"]] == [3]


@pytest.mark.slow
def test_with_no_clone_the_printed_step_clones_and_inits_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    up = _upstream(tmp_path / "src" / "slime")
    fork = tmp_path / "work" / "vime"
    fork.mkdir(parents=True)
    git.run(fork, ["init", "-q"])
    monkeypatch.chdir(fork)
    doc = init_json(capsys, "--upstream", f"file://{up.path}", "--map", "slime/=vime/")
    clone = tmp_path / "work" / "slime"
    assert doc["next"][0].startswith(f"git clone file://{up.path} {clone} && vimesync init --force")
    done = shell(doc["next"][0] + " --json", fork)
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout[done.stdout.index("{") :])
    assert load_config(cwd=fork).path_map == (("slime/", "vime/"),)
    walked = shell(again["next"][0] + " --json", fork)  # and the step that init prints runs too
    assert walked.returncode == 0, (again["next"][0], walked.stderr)


def test_nothing_known_prints_init_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Repo(tmp_path / "fork")
    monkeypatch.chdir(tmp_path / "fork")
    doc = init_json(capsys)
    assert doc["next"][0] == "vimesync init --force --upstream PATH"
    assert "vimesync walk" not in doc["next"][0]  # it would fail: no upstream


@pytest.mark.parametrize(
    ("maps", "up", "down"),
    [
        ((), "slime", "vime"),
        (("--map", "src/slime/=pkg/vime2/"), "slime", "vime2"),
        (("--map", "a-b/=c/"), "slime", "c"),
    ],
)
def test_the_renamed_package_examples_load_once_uncommented(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    maps: tuple,
    up: str,
    down: str,
) -> None:
    Repo(tmp_path / "fork")
    monkeypatch.chdir(tmp_path / "fork")
    init_json(capsys, *maps)
    config = tmp_path / "fork" / "vimesync.toml"
    text = config.read_text()
    assert "# [[upstream.translate]]" in text and "# [[upstream.verify]]" in text
    assert load_config(cwd=tmp_path / "fork").translate == ()  # commented: nothing applies
    start = text.index("# [[upstream.translate]]")
    end = text.index("[downstream]")
    block = "\n".join(line.removeprefix("# ").removeprefix("#") for line in text[start:end].splitlines())
    config.write_text(text[:start] + block + "\n\n" + text[end:])
    cfg = load_config(cwd=tmp_path / "fork")
    transform = load_transform(cfg)
    data = f"import {up}\nfrom {up}.x import y\nimport {up}_other\n".encode()
    (rule,) = transform.translations
    assert rule.apply(data)[0] == f"import {down}\nfrom {down}.x import y\nimport {up}_other\n".encode()
    assert [v.must for v in cfg.verify] == ["not-match"]


def test_gitignore_is_created_then_left_as_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Repo(tmp_path / "fork")
    monkeypatch.chdir(tmp_path / "fork")
    ignore = tmp_path / "fork" / ".gitignore"
    doc = init_json(capsys)
    assert ignore.read_text() == ".vimesync/\n" and any("added to .gitignore" in n for n in doc["notes"])
    init_json(capsys, "--force")
    assert ignore.read_text() == ".vimesync/\n"  # once
    ignore.write_text("*.pyc")  # no newline at its end
    init_json(capsys, "--force")
    assert ignore.read_text() == "*.pyc\n.vimesync/\n"
    ignore.write_text("build/\n/.vimesync\n")
    doc = init_json(capsys, "--force")
    assert (
        ignore.read_text() == "build/\n/.vimesync\n"
        and ".gitignore already ignores .vimesync/" in doc["notes"]
    )


@pytest.mark.parametrize("kind", ["symlink", "dangling", "folder"])
def test_gitignore_is_never_written_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    Repo(tmp_path / "fork")
    monkeypatch.chdir(tmp_path / "fork")
    ignore = tmp_path / "fork" / ".gitignore"
    outside = tmp_path / "outside"
    if kind == "symlink":
        outside.write_text("keep\n")
        ignore.symlink_to(outside)
    elif kind == "dangling":
        ignore.symlink_to(outside)
    else:
        ignore.mkdir()
    doc = init_json(capsys)
    assert any("add .vimesync/ to .gitignore by hand" in n for n in doc["notes"]), doc["notes"]
    if kind == "symlink":
        assert outside.read_text() == "keep\n" and ignore.is_symlink()
    elif kind == "dangling":
        assert not outside.exists() and ignore.is_symlink()
    else:
        assert ignore.is_dir()


def test_force_removes_only_the_old_pins_init_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _upstream(tmp_path / "slime")
    Repo(tmp_path / "fork")
    fork = tmp_path / "fork"
    monkeypatch.chdir(fork)
    init_json(capsys)
    assert sorted(os.listdir(fork / "pins")) == ["engine.toml", "upstream.toml"]
    doc = init_json(capsys, "--force", "--upstream", "../slime", "--engine", "SGLang")
    assert sorted(os.listdir(fork / "pins")) == ["sglang.toml", "slime.toml"]
    assert sorted(n for n in doc["notes"] if n.startswith("removed ")) == [
        "removed pins/engine.toml: the pin an earlier init wrote, which vimesync.toml no longer names",
        "removed pins/upstream.toml: the pin an earlier init wrote, which vimesync.toml no longer names",
    ]
    # A pin the config names that init did not write (a hand-written one, a symlink, a path out of
    # pins/) is left alone.
    (fork / "pins/sglang.toml").write_text("[engine]\nname = 'mine'\n")
    outside = tmp_path / "outside.toml"
    outside.write_text("# The last upstream commit carried into this downstream\n")
    (fork / "pins/slime.toml").unlink()
    (fork / "pins/slime.toml").symlink_to(outside)
    text = (fork / "vimesync.toml").read_text()
    (fork / "vimesync.toml").write_text(
        text.replace('pin = "pins/slime.toml"', 'pin = "pins/../../outside.toml"')
    )
    init_json(capsys, "--force")
    assert (fork / "pins/sglang.toml").read_text() == "[engine]\nname = 'mine'\n"
    assert outside.exists()
    assert (fork / "pins/slime.toml").is_symlink()
