"""``.vimesync/bump/bump.json`` lies in the checkout, where a pull request can write it: the new pin
it names is judged like any location repository content names (``vimesync.repopaths``), and the
file itself is read like any file content names (no symlink, bounded, no value in an error)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import Stack
from vimesync.check.fromedits import MANIFEST, NewPin, read_manifest
from vimesync.errors import VimesyncError

SECRET = "hunter2-secret-line\n"


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    """A checkout (a real git repository) with the bump's work folder at its root, and a folder
    outside it holding a file that must never reach a patch."""
    down = tmp_path / "down"
    down.mkdir()
    subprocess.run(["git", "init", "-q", str(down)], check=True)
    (down / ".vimesync/bump").mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "eng").mkdir(parents=True)
    (outside / "eng/core.py").write_text(SECRET)
    return down


def _manifest(down: Path, **values: object) -> Path:
    folder = down / ".vimesync/bump"
    (folder / MANIFEST).write_text(json.dumps({"label": "v2", **values}))
    return folder


def _refused(folder: Path, *, untrusted: bool) -> str:
    with pytest.raises(VimesyncError) as info:
        read_manifest(folder, untrusted=untrusted)
    assert info.value.exit_code == 2
    message = str(info.value) + str(getattr(info.value, "hint", ""))
    assert "hunter2" not in message and "\x1b" not in message, message
    return message


def test_outside_the_checkout_only_a_trusted_run_or_the_jobs_flag_may_name_the_source(checkout: Path) -> None:
    outside = checkout.parent / "outside"
    folder = _manifest(checkout, to=str(outside))
    assert read_manifest(folder, untrusted=False).source == outside  # a maintainer's own bump
    message = _refused(folder, untrusted=True)
    assert "outside the checkout" in message and "--source" in message
    flag = checkout.parent / "wheel.whl"  # the job's --source wins, whatever the file says
    assert read_manifest(folder, untrusted=True, source=flag, rev=None) == NewPin(flag, None, str(flag))


def test_a_dotdot_escape_is_outside_the_checkout(checkout: Path) -> None:
    folder = _manifest(checkout, to=str(checkout) + "/../outside")
    assert "outside the checkout" in _refused(folder, untrusted=True)
    folder = _manifest(checkout, to="../outside")  # vimesync writes an absolute path, always
    assert "an absolute path" in _refused(folder, untrusted=False)


@pytest.mark.parametrize("untrusted", [False, True])
def test_a_source_through_a_symlink_in_the_checkout_is_refused(checkout: Path, untrusted: bool) -> None:
    os.symlink(checkout.parent / "outside", checkout / "link")
    folder = _manifest(checkout, to=str(checkout / "link"))
    assert "symbolic link" in _refused(folder, untrusted=untrusted)
    os.symlink(checkout.parent, checkout / "up")  # a symlinked parent
    folder = _manifest(checkout, to=str(checkout / "up/outside"))
    assert "symbolic link" in _refused(folder, untrusted=untrusted)


def test_a_repository_committed_inside_the_checkout_or_a_pseudo_file_is_refused(checkout: Path) -> None:
    evil = checkout / "evil"
    (evil / "objects").mkdir(parents=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    assert "repository inside" in _refused(_manifest(checkout, to=str(evil)), untrusted=False)
    assert "/proc" in _refused(_manifest(checkout, to="/proc/self/root"), untrusted=False)
    assert "/proc" in _refused(_manifest(checkout, to="/tmp/../proc/1/root"), untrusted=False)
    link = checkout.parent / "innocent"  # outside the checkout, its real place under /proc
    os.symlink("/proc/1/root/etc", link)
    message = _refused(_manifest(checkout, to=str(link)), untrusted=False)  # never a traceback
    assert "/proc" in message or "may not follow" in message


@pytest.mark.parametrize(
    "values, needle",
    [
        ({"to": "/tmp/hunter2\x1b[2J"}, "(to: "),  # control characters: the value is never shown
        ({"to": "/tmp/x", "rev": "--upload-pack=hunter2"}, "(rev: "),
        ({"to": "/tmp/x", "rev": "a\nhunter2"}, "(rev: "),
        ({"to": "/tmp/x", "label": "v2\x1b]8;;hunter2"}, "(label: "),
    ],
)
def test_control_characters_and_options_are_refused_unshown(
    checkout: Path, values: dict[str, str], needle: str
) -> None:
    assert needle in _refused(_manifest(checkout, **values), untrusted=False)


def test_the_manifest_is_read_bounded_and_never_through_a_symlink(checkout: Path) -> None:
    folder = checkout / ".vimesync/bump"
    (folder / MANIFEST).write_text(json.dumps({"to": "/x", "label": "hunter2" * 200_000}))
    assert "limit" in _refused(folder, untrusted=False)  # over 1 MiB: refused before parsing
    (folder / MANIFEST).unlink()
    elsewhere = checkout.parent / "elsewhere.json"
    elsewhere.write_text(json.dumps({"to": str(checkout.parent / "outside")}))
    os.symlink(elsewhere, folder / MANIFEST)
    assert "symbolic link" in _refused(folder, untrusted=False)
    os.unlink(folder / MANIFEST)
    real = checkout.parent / "realbump"
    real.mkdir()
    (real / MANIFEST).write_text(json.dumps({"to": str(checkout.parent / "outside")}))
    os.rmdir(folder)
    os.symlink(real, folder)  # .vimesync/bump itself a symlink
    assert "symbolic link" in _refused(folder, untrusted=False)


def test_cli_refresh_in_ci_never_reads_a_source_the_checkout_names_outside_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: a pull request commits a bump.json naming a folder outside the checkout and an
    "edited" copy of a file there; the refresh would diff the two and write the outside file's
    lines into the patch. In CI it is refused, naming the flag that may name a source."""
    s = Stack(tmp_path)
    s.add("p.patch", {"eng/core.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(s.dir)], check=True)
    folder = s.dir / ".vimesync/bump"
    (folder / "p.patch/eng").mkdir(parents=True)
    (folder / "p.patch/eng/core.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    (outside / "eng").mkdir(parents=True)
    (outside / "eng/core.py").write_text(SECRET)
    (folder / MANIFEST).write_text(json.dumps({"to": str(outside), "label": "v2"}))
    before = (s.dir / "p.patch").read_bytes()
    monkeypatch.setenv("VIMESYNC_UNTRUSTED", "1")
    inside = s.dir / "engine-copy"  # a config naming a source inside the checkout: fine in CI
    (inside / "eng").mkdir(parents=True)
    (inside / "eng/core.py").write_text("x = 0\n")
    (s.dir / "eng.toml").write_text('[engine]\nname = "eng"\nseries = "series"\n')
    (s.dir / "vimesync.toml").write_text(f'[engine]\npin = "eng.toml"\nsource = "{inside}"\n')
    args = ("patches", "refresh", "p.patch", "--config", str(s.dir / "vimesync.toml"))
    code, out, err = run(capsys, *args)
    assert code == 2 and "outside the checkout" in err and "--source" in err, err
    assert (s.dir / "p.patch").read_bytes() == before and "hunter2" not in out + err
    code, out, err = run(capsys, *args, "--source", str(inside), "--json")  # the job's flag
    assert code == 0 and json.loads(out)["pin"] == str(inside), err
    assert "hunter2" not in (s.dir / "p.patch").read_text()
