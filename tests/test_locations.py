"""Locations (repositories, engine sources) named by repository content: never through a symlink
in the checkout, never a pseudo file system, never a repository committed as files, and in an
untrusted checkout (CI) never outside the checkout. Flags from the job always win."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.planted import build_downstream, build_upstream, embedded
from vimesync import git
from vimesync.settings import UNTRUSTED_ENV, Settings

SECRET = "s3cr3t-never-printed"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"CI": "true"}, True),
        ({"CI": "false"}, False),
        ({"GITHUB_ACTIONS": "true"}, True),
        ({"JENKINS_URL": "http://ci"}, True),
        ({"CODEBUILD_BUILD_ID": "vime:1234"}, True),  # AWS CodeBuild sets no CI
        ({"BUILDER_OUTPUT": "/builder/outputs"}, True),  # Google Cloud Build
        ({"TEAMCITY_VERSION": "2024.03"}, True),
        ({"TEAMCITY_VERSION": "2024.03", UNTRUSTED_ENV: "0"}, False),
        ({"CI": "true", UNTRUSTED_ENV: "0"}, False),
        ({UNTRUSTED_ENV: "1"}, True),
    ],
)
def test_untrusted_checkout_follows_ci_markers_and_the_override(env: dict[str, str], expected: bool) -> None:
    assert Settings.of(env).untrusted is expected


def _walk(capsys: pytest.CaptureFixture[str], down: Path, base: str, *flags: str) -> tuple[int, str, str]:
    return run(capsys, "walk", "--config", str(down / "vimesync.toml"), "--range", f"{base}..HEAD", *flags)


@pytest.mark.slow
def test_in_ci_a_location_outside_the_checkout_comes_only_from_a_flag(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    up, base = build_upstream(tmp_path / "up")
    down, _ = build_downstream(tmp_path / "down")
    (down.path / "vimesync.toml").write_text(f'[upstream]\npath = "{up.path}"\n')
    assert _walk(capsys, down.path, base)[0] == 0  # a maintainer's machine: honoured
    monkeypatch.setenv("CI", "true")
    code, _, err = _walk(capsys, down.path, base)
    assert code == 2 and "outside the checkout" in err and "--upstream" in err, err
    assert _walk(capsys, down.path, base, "--upstream", str(up.path))[0] == 0
    monkeypatch.setenv(UNTRUSTED_ENV, "0")  # a job on trusted refs says so
    assert _walk(capsys, down.path, base)[0] == 0


def test_a_location_through_a_symlink_in_the_checkout_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    up, base = build_upstream(tmp_path / "up")
    down, _ = build_downstream(tmp_path / "down")
    (down.path / "dl").symlink_to(up.path)  # a PR commits a link to any repository on the runner
    (down.path / "vimesync.toml").write_text('[upstream]\npath = "dl"\n[downstream]\npath = "."\n')
    code, _, err = _walk(capsys, down.path, base)
    assert code == 2 and "symbolic link inside the checkout" in err, err
    (down.path / "vimesync.toml").write_text(f'[upstream]\npath = "{up.path}"\n[downstream]\npath = "dl"\n')
    code, _, err = _walk(capsys, down.path, base)
    assert code == 2 and "[downstream] path" in err and "symbolic link" in err, err


@pytest.mark.parametrize("source", ["/proc/self", "/proc/self/cwd/../../proc/self", "link-to-proc"])
def test_a_pin_naming_a_pseudo_file_system_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str
) -> None:
    monkeypatch.setenv("MY_SECRET", SECRET)
    down, _ = build_downstream(tmp_path / "down")
    d = down.path
    (d / "link-to-proc").symlink_to("/proc/self")
    (d / "patches").mkdir()
    (d / "patches/p.patch").write_text(
        "diff --git a/environ b/environ\n--- a/environ\n+++ b/environ\n@@ -1 +1 @@\n-x\n+y\n"
    )
    (d / "patches/series").write_text("p.patch\n")
    (d / "pins").mkdir()
    (d / "pins/eng.toml").write_text(f'[engine]\nseries = "../patches/series"\nsource = "{source}"\n')
    (d / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    for flags in ([], ["--json"]):
        code, out, err = run(capsys, "patches", "check", "--config", str(d / "vimesync.toml"), *flags)
        assert code == 2, err
        assert SECRET not in out + err and "GITHUB" not in out + err


def test_a_committed_repository_with_a_symlinked_head_is_still_a_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    down, _, _ = embedded(tmp_path, tmp_path / "marker")
    evil = down / "evil.git"
    git.run(evil, ["pack-refs", "--all"])
    (evil / "HEAD").unlink()
    (evil / "HEAD").symlink_to("refs/heads/main")  # git may store a symlink; is_file() follows it
    for p in (evil / "refs/heads").iterdir():
        p.unlink()
    (down / "patches").mkdir()
    (down / "patches/series").write_text("")
    (down / "pins").mkdir()
    (down / "pins/eng.toml").write_text('[engine]\nseries = "../patches/series"\nsource = "../evil.git"\n')
    (down / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    code, _, err = run(capsys, "patches", "check", "--config", str(down / "vimesync.toml"))
    assert code == 2 and "[engine] source" in err and "repository inside" in err, err
    assert os.path.islink(evil / "HEAD")


@pytest.mark.parametrize("trap_config", ["[core\n broken", "[core]\n\tbare = false\n\tworktree = /\n"])
def test_a_pin_in_a_folder_dressed_as_a_repository_cannot_move_the_checkout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, trap_config: str
) -> None:
    # The checkout is found from the file system (.git, which git never tracks), not by running
    # git in a folder the pull request controls, which it can make look like any repository.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text('SECRET = "s"\n')
    down, _ = build_downstream(tmp_path / "down")
    d = down.path
    trap = d / "trap"
    for sub in ("objects", "refs"):
        (trap / sub).mkdir(parents=True)
    (trap / "HEAD").write_text("ref: refs/heads/main\n")
    (trap / "config").write_text(trap_config)
    (d / "patches").mkdir()
    (d / "patches/series").write_text("")
    (trap / "pin.toml").write_text(f'[engine]\nseries = "../patches/series"\nsource = "{outside}"\n')
    (d / "vimesync.toml").write_text('[engine]\npin = "trap/pin.toml"\n')
    monkeypatch.setenv("CI", "true")
    code, _, err = run(capsys, "patches", "check", "--config", str(d / "vimesync.toml"))
    assert code == 2 and "outside the checkout" in err, err


def test_a_pin_inside_a_committed_repository_naming_it_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    down, _, _ = embedded(tmp_path, tmp_path / "marker")
    (down / "patches").mkdir()
    (down / "patches/series").write_text("")
    (down / "evil.git/pin.toml").write_text('[engine]\nseries = "../patches/series"\nsource = "."\n')
    (down / "vimesync.toml").write_text('[engine]\npin = "evil.git/pin.toml"\n')
    code, _, err = run(capsys, "patches", "check", "--config", str(down / "vimesync.toml"))
    assert code == 2 and "repository inside" in err, err
