"""The error texts a new user met, each as it now reads: what is wrong, where, and what to do."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.stack import Stack
from vimesync.cli.app import main
from vimesync.config import load_engine_pin
from vimesync.errors import ConfigError
from vimesync.patches.series import load_series


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, " ".join(err.split())


def test_a_mistyped_synced_names_the_pin_and_suggests_a_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    up = Repo(tmp_path / "slime")
    up.commit("start", {"a.py": "a\n"})
    down = Repo(tmp_path / "vime")
    (down.path / "pins").mkdir()
    (down.path / "pins/slime.toml").write_text(f'[upstream]\nsynced = "{"0" * 39}1"\n')
    (down.path / "vimesync.toml").write_text('[upstream]\npath = "../slime"\npin = "pins/slime.toml"\n')
    monkeypatch.chdir(down.path)
    code, out, err = run(capsys, "walk")
    pin = down.path / "pins/slime.toml"
    assert code == 2
    assert f"{pin}: [upstream] synced = '{'0' * 39}1' is not a commit of the upstream" in err
    assert f"fetch it (git -C {up.path} fetch origin), or correct the sha in {pin}" in err


@pytest.mark.parametrize("json_", [False, True])
def test_audit_outside_a_repository_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], json_: bool
) -> None:
    up = Repo(tmp_path / "up")
    up.commit("start", {"a.py": "a\n"})
    (tmp_path / "plain").mkdir()
    monkeypatch.chdir(tmp_path / "plain")
    extra = ["--json"] if json_ else []
    code, out, err = run(capsys, "audit", "--baseline", "HEAD", "--upstream", str(up.path), *extra)
    assert code == 2 and f"{tmp_path / 'plain'}: not a git repository" in err
    assert "unknown revision" not in err
    if json_:
        assert json.loads(out)["error"].endswith("not a git repository")


def test_audit_with_nothing_changed_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up = Repo(tmp_path / "up")
    up.commit("start", {"a.py": "a\n"})
    down = Repo(tmp_path / "down")
    down.commit("start", {"a.py": "a\n"})
    args = ["audit", "--baseline", "HEAD", "--downstream", str(down.path), "--upstream", str(up.path)]
    code, out, err = run(capsys, *args)
    assert code == 0 and "0 changed paths" in out and "OK:" not in out
    assert "warning: no path changed between the baseline and the head" in err
    assert "is --baseline the commit before the sync?" in err


def test_a_folder_holding_a_wheel_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Stack(tmp_path)
    s.add("0001.patch", {"eng/util.py": "X = 1\n"})
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "eng-1.0-py3-none-any.whl", "w") as z:
        z.writestr("eng/util.py", "import os\n")
    code, _, err = run(
        capsys, "patches", "check", "--source", str(downloads), "--series", str(s.dir / "series")
    )
    assert code == 2 and "check --strip" not in err
    assert f"--source {downloads} is a folder holding eng-1.0-py3-none-any.whl, not a source tree" in err
    assert f"pass the archive itself: --source {downloads / 'eng-1.0-py3-none-any.whl'}" in err


def test_a_series_option_with_a_space_is_a_whole_sentence(tmp_path: Path) -> None:
    (tmp_path / "x.patch").write_text("")
    (tmp_path / "series").write_text("x.patch -p 2\n")
    with pytest.raises(ConfigError) as exc:
        load_series(tmp_path / "series")
    assert exc.value.message.endswith(
        "unsupported option '-p' for 'x.patch': the only option a series line may have is -pN, "
        "written as one word (-p1, -p2)"
    )


def test_strip_must_be_an_integer(tmp_path: Path) -> None:
    pin = tmp_path / "e.toml"
    pin.write_text('[engine]\nstrip = "2"\n')
    with pytest.raises(ConfigError) as exc:
        load_engine_pin(pin)
    assert exc.value.message == f"{pin}: [engine] strip must be an integer, not a string"


def test_a_rev_in_a_wheel_pin_is_refused_naming_the_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo(tmp_path / "vime")
    wheel = tmp_path / "eng-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("eng/util.py", "import os\n")
    (repo.path / "patches").mkdir()
    (repo.path / "patches/series").write_text("")
    (repo.path / "pins").mkdir()
    pin = repo.path / "pins/eng.toml"
    pin.write_text(f'[engine]\nrev = "{"a" * 40}"\nseries = "../patches/series"\nsource = "{wheel}"\n')
    (repo.path / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    monkeypatch.chdir(repo.path)
    code, out, err = run(capsys, "patches", "check")
    assert code == 2 and err.startswith(f"error: {pin}: [engine] rev is set, but the engine source {wheel}")
    assert f"remove rev from {pin}" in err


@pytest.mark.parametrize(
    "args",
    [
        ["walk", "--bogus", "--json"],
        ["patches", "check", "--strip", "x", "--json"],
        ["report", "--format", "json", "--nope"],
        ["init", "--json", "--map"],
    ],
)
def test_a_usage_error_with_json_prints_one_json_document(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and "Error:" in err
    doc = json.loads(out)
    assert doc["ok"] is False and doc["exit_code"] == 2 and doc["error"]
