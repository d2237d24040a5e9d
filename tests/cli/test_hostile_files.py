"""Files a pull request controls, driven through the real CLI in a subprocess: nothing is read
through a symlink, no content reaches stdout/stderr/JSON. Each case exits 2 with one line naming
the input, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.builders.hostile import SECRET, assert_refused, cli
from tests.builders.stack import Stack

pytestmark = pytest.mark.slow  # the CLI as a real process, one per case


@pytest.mark.parametrize("json_out", [False, True])
def test_series_flag_symlinked_to_proc_environ(checkout: Path, json_out: bool) -> None:
    series = checkout / "patches/series"
    series.unlink()
    series.symlink_to("/proc/self/environ")
    proc = cli(
        "patches", "check", "--series", "patches/series", *(["--json"] if json_out else []), cwd=checkout
    )
    assert_refused(proc, "patches/series", "symbolic link")
    if json_out:
        assert json.loads(proc.stdout)["exit_code"] == 2


@pytest.mark.parametrize("json_out", [False, True])
def test_pin_series_folder_whose_series_is_a_symlink(checkout: Path, json_out: bool) -> None:
    series = checkout / "patches/series"
    series.unlink()
    series.symlink_to("/proc/self/environ")
    proc = cli("patches", "check", *(["--json"] if json_out else []), cwd=checkout)
    assert_refused(proc, "symbolic link")


def test_patch_named_by_the_series_symlinked_to_proc_environ(checkout: Path) -> None:
    patch = checkout / "patches/0001-a.patch"
    patch.unlink()
    patch.symlink_to("/proc/self/environ")
    assert_refused(cli("patches", "check", "--json", cwd=checkout), "0001-a.patch", "symbolic link")


def test_first_line_of_environ_as_a_regular_series_is_only_excerpted(checkout: Path) -> None:
    # A series that is a regular file in the repository may be quoted, but shortly and escaped.
    (checkout / "patches/series").write_text("X" * 100 + SECRET + "\n")
    proc = cli("patches", "check", cwd=checkout)
    assert_refused(proc, "series:1", "'" + "X" * 80 + "'…")


def test_symlinked_patches_folder_is_refused(checkout: Path, tmp_path: Path, stack: Stack) -> None:
    (checkout / "patches").rename(tmp_path / "elsewhere")
    (checkout / "patches").symlink_to(tmp_path / "elsewhere")
    assert_refused(cli("patches", "check", cwd=checkout), "patches: refusing to follow a symbolic link")
    (checkout / "vimesync.toml").unlink()  # the flags alone: the folder on the way is still checked
    flags = ("--source", str(stack.repo.path), "--rev", stack.pin, "--series", "patches/series")
    assert_refused(cli("patches", "check", *flags, cwd=checkout), "patches: it is a symbolic link")


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("vimesync.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n"),
        ("pins/engine.toml", "[engine]\nstrip = " + "9" * 5000 + "\n"),
    ],
    ids=["nested-config", "huge-int-pin"],
)
def test_toml_bombs_exit_2_naming_the_file(checkout: Path, file: str, text: str) -> None:
    (checkout / file).write_text(text)
    assert_refused(cli("patches", "check", "--json", cwd=checkout), file)


def test_interpreter_committed_on_a_path_entry_inside_the_checkout_never_runs(
    checkout: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    fake = checkout / "bin/python3.99"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {marker}\necho cpython 3 99 0\n")
    fake.chmod(0o755)
    path = os.pathsep.join([str(checkout / "bin"), "bin", os.environ.get("PATH", "")])
    proc = cli("patches", "check", "--python", "3.99", cwd=checkout, PATH=path, HOME=str(tmp_path))
    assert_refused(proc, "python3.99 is needed")
    assert not marker.exists()


def test_patch_creating_a_2000_level_path_is_refused(checkout: Path, tmp_path: Path) -> None:
    deep = "a/" * 2000 + "x.py"
    header = f"diff --git a/{deep} b/{deep}\nnew file mode 100644\n"
    patch = header + f"--- /dev/null\n+++ b/{deep}\n@@ -0,0 +1 @@\n+x\n"
    (checkout / "patches/0002-deep.patch").write_text(patch)
    (checkout / "patches/series").write_text("0001-a.patch\n0002-deep.patch\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = cli("patches", "check", cwd=checkout, TMPDIR=str(tmp))
    assert_refused(proc, "0002-deep.patch", "deeper than 256 components")
    assert list(tmp.iterdir()) == []


def test_patch_creating_a_name_too_long_fails_naming_the_patch_and_file(checkout: Path) -> None:
    # A 300-byte file name: the scratch tree's OSError escaped as "error: bbb….py: File name too
    # long" (exit 2, no patch named). git says the patch does not apply: a failed check, exit 1.
    long = "a" * 255 + "/" + "b" * 300 + ".py"
    patch = f"diff --git a/{long} b/{long}\nnew file mode 100644\n--- /dev/null\n+++ b/{long}\n"
    (checkout / "patches/0002-long.patch").write_text(patch + "@@ -0,0 +1 @@\n+x = 1\n")
    (checkout / "patches/series").write_text("0001-a.patch\n0002-long.patch\n")
    proc = cli("patches", "check", "--json", cwd=checkout)
    assert proc.returncode == 1, proc.stderr
    failed = [p for p in json.loads(proc.stdout)["patches"] if not p["ok"]]
    assert [p["name"] for p in failed] == ["0002-long.patch"]
    assert "File name too long" in json.dumps(failed) and "Traceback" not in proc.stderr


def test_long_unsafe_path_is_only_excerpted(checkout: Path) -> None:
    # A 4.5 KB path with "..": the error line quoted all of it.
    bad = "/".join(["c" * 50] * 90) + "/../x.py"
    patch = f"diff --git a/{bad} b/{bad}\nnew file mode 100644\n--- /dev/null\n+++ b/{bad}\n"
    (checkout / "patches/0002-bad.patch").write_text(patch + "@@ -0,0 +1 @@\n+x = 1\n")
    (checkout / "patches/series").write_text("0001-a.patch\n0002-bad.patch\n")
    proc = cli("patches", "check", cwd=checkout)
    assert_refused(proc, "0002-bad.patch", "unsafe path '" + "c" * 50 + "/", "'…")
    assert len(proc.stderr) < 400
