"""``patches check --applier gnu-patch``: a stack whose context drifted applies with fuzz (a
warning, a failure under --strict, a ``fuzz`` in each JSON offset entry), from the flags or from
the pin's ``applier``/``fuzz``/``forward``; git's applier refuses the same stack."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gnupatch import GNU_PATCH
from vimesync.config import load_engine_pin
from vimesync.errors import ConfigError

SOURCE = "import os\n\n\ndef f():\n    a = 1\n    b = 2\n    return a + b\n"
PATCH = """Description: f returns more
--- a/m.py
+++ b/m.py
@@ -1,7 +1,7 @@
 import sys
~
~
 def f():
-    a = 1
+    a = 10
     b = 2
     return a + b
""".replace("~\n", " \n")  # blank context lines (a space: kept out of the source's whitespace)


@pytest.fixture()
def stack(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(SOURCE)
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "one.patch").write_text(PATCH)
    (patches / "series").write_text("one.patch\n")
    return src, patches / "series"


def _check(capsys: pytest.CaptureFixture[str], stack: tuple[Path, Path], *flags: str) -> tuple[int, str, str]:
    src, series = stack
    return run(capsys, "patches", "check", "--source", str(src), "--series", str(series), *flags)


def test_git_refuses_gnu_applies_with_fuzz_as_a_warning(capsys, stack) -> None:
    assert _check(capsys, stack)[0] == 1
    code, out, _ = _check(capsys, stack, "--applier", "gnu-patch")
    assert code == 0
    flat = " ".join(out.split())
    assert "warning: m.py: hunk #1 applied with fuzz 1 at offset +0" in flat
    assert "patch -p1 --fuzz=2" in flat


def test_strict_fails_a_fuzzed_hunk_and_json_has_its_fuzz(capsys, stack) -> None:
    code, out, _ = _check(capsys, stack, "--applier", "gnu-patch", "--strict")
    assert code == 1 and "applied only with fuzz" in " ".join(out.split())
    code, out, _ = _check(capsys, stack, "--applier", "gnu-patch", "--json")
    assert json.loads(out)["patches"][0]["offsets"] == [{"file": "m.py", "hunk": 1, "offset": 0, "fuzz": 1}]


def test_fuzz_zero_fails_and_fuzz_needs_gnu(capsys, stack) -> None:
    assert _check(capsys, stack, "--applier", "gnu-patch", "--fuzz", "0")[0] == 1
    code, _, err = _check(capsys, stack, "--fuzz", "1")
    assert code == 2 and "--applier gnu-patch" in err


def test_the_pin_names_the_applier(tmp_path: Path) -> None:
    pin = tmp_path / "e.toml"
    pin.write_text('[engine]\napplier = "gnu-patch"\nfuzz = 3\nforward = true\n')
    got = load_engine_pin(pin)
    assert (got.applier, got.fuzz, got.forward) == ("gnu-patch", 3, True)
    pin.write_text('[engine]\napplier = "quilt"\n')
    with pytest.raises(ConfigError, match="applier"):
        load_engine_pin(pin)
    pin.write_text("[engine]\nfuzz = 1\n")
    with pytest.raises(ConfigError, match="gnu-patch"):
        load_engine_pin(pin)


def test_a_crlf_patch_applies_to_an_lf_tree_as_gnu_patch_strips_its_crs(capsys, tmp_path: Path) -> None:
    # GNU patch strips the CRs of a patch whose header ends in CRLF, then compares byte for byte:
    # the CRLF patch applies to the LF tree (git apply refuses it) and not to a CRLF one.
    src, series = tmp_path / "src", tmp_path / "patches" / "series"
    src.mkdir()
    series.parent.mkdir()
    (src / "m.py").write_bytes(b"a = 1\nb = 2\nc = 3\n")
    patch = b"--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n"
    (series.parent / "one.patch").write_bytes(patch.replace(b"\n", b"\r\n"))
    series.write_text("one.patch\n")
    flags = ("patches", "check", "--source", str(src), "--series", str(series), "--no-cache")
    assert run(capsys, *flags)[0] == 1
    assert run(capsys, *flags, "--applier", "gnu-patch")[0] == 0
    (src / "m.py").write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    code, out, _ = run(capsys, *flags, "--applier", "gnu-patch")
    assert code == 1 and "FAILED at 1 (different line endings)" in " ".join(out.split())


FAILING = """--- a/w.txt
+++ b/w.txt
@@ -1,3 +1,3 @@
 p
-q
+Q
 r
--- a/y.txt
+++ b/y.txt
@@ -1,3 +1,3 @@
 1
-2
+TWO
 3
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
@@ -9,5 +9,5 @@
 i
 j
-ZZZ
+K
 l
 m
"""


def _failing_stack(tmp_path: Path) -> tuple[Path, Path]:
    src, series = tmp_path / "src", tmp_path / "patches" / "series"
    src.mkdir()
    series.parent.mkdir()
    (src / "x.txt").write_text("".join(f"{c}\n" for c in "abcdefghijklm"))
    (src / "y.txt").write_text("1\n2\n3\n")
    (src / "z.txt").write_text("untouched\n")
    (src / "w.txt").write_text("p\nQ\nr\n")  # one.patch is in it already: GNU --batch un-applies it
    (series.parent / "one.patch").write_text(FAILING)
    (series.parent / "two.patch").write_text("--- a/z.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-untouched\n+touched\n")
    series.write_text("one.patch\ntwo.patch\n")
    return src, series


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("keep_going", [False, True])
def test_export_of_a_failed_patch_holds_what_gnu_patch_leaves(
    capsys, tmp_path: Path, keep_going: bool
) -> None:
    # GNU patch writes the files whose hunks all applied, the hunks that applied of a file
    # whose others failed (those go to x.txt.rej) and un-applies a file it finds reversed
    # (--batch assumes -R): --export holds that tree, the verdict stays "failed". Without
    # --keep-going the stack stops there, as a script running patch would.
    src, series = _failing_stack(tmp_path)
    export = tmp_path / "export"
    flags = ["--keep-going"] if keep_going else []
    code, _, err = run(
        capsys, "patches", "check", "--source", str(src), "--series", str(series), "--no-cache",
        "--applier", "gnu-patch", "--export", str(export), *flags,
    )  # fmt: skip
    assert code == 1 and "as GNU patch leaves it" in " ".join(err.split())
    want = _tree(src)
    want["x.txt"] = want["x.txt"].replace(b"b\n", b"B\n")
    want["y.txt"] = b"1\nTWO\n3\n"
    want["w.txt"] = b"p\nq\nr\n"  # "Reversed (or previously applied) patch detected!  Assuming -R."
    if keep_going:
        want["z.txt"] = b"touched\n"
    assert _tree(export) == want
    if GNU_PATCH is not None:  # the reference: GNU's own tree, patch by patch until one fails
        gnu = tmp_path / "gnu"
        shutil.copytree(src, gnu)
        for name in ("one.patch", "two.patch"):
            patch = (series.parent / name).read_bytes()
            args = [GNU_PATCH, "-p1", "--fuzz=2", "--batch", "--no-backup-if-mismatch", "-r", "-"]
            done = subprocess.run(args, cwd=gnu, input=patch, capture_output=True, check=False)
            if done.returncode and not keep_going:
                break
        assert _tree(gnu) == want
    # git apply's semantics: the failed patch leaves nothing
    shutil.rmtree(export)
    run(capsys, "patches", "check", "--source", str(src), "--series", str(series), "--export", str(export))
    assert _tree(export) == _tree(src)
