"""An engine wheel exports whole, and a failed export leaves nothing (issue 17, item 1).

A real vLLM wheel holds shared objects of ~300 MiB that no patch touches: the export streams
them instead of reading each into memory under the one-member read cap. Here the cap is
lowered, so that a member over it is a few MiB, not hundreds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from vimesync.sources import archive as archives
from vimesync.sources import open_source

BIG = 3 << 20


def _wheel(tmp_path: Path, *, corrupt: bool = False) -> Path:
    wheel = tmp_path / "eng-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("eng/__init__.py", "VERSION = 1\n")
        z.writestr("eng/_C.abi3.so", bytes(range(256)) * (BIG // 256))
    if corrupt:  # flip bytes inside the big member's compressed data: its CRC fails on read
        data = bytearray(wheel.read_bytes())
        at = data.index(b"eng/_C.abi3.so", 40) + 200
        data[at : at + 64] = bytes(64)
        wheel.write_bytes(bytes(data))
    return wheel


def test_a_member_over_the_read_cap_is_exported_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBER_READ", 1 << 20)
    wheel = _wheel(tmp_path)
    dest = tmp_path / "out"
    with open_source(wheel) as src:
        assert src.export(dest) == 2
        with pytest.raises(Exception, match="cap for one file"):
            src.read("eng/_C.abi3.so")  # read whole (to patch or hash it): still capped
    assert (dest / "eng/_C.abi3.so").read_bytes() == bytes(range(256)) * (BIG // 256)
    assert (dest / "eng/__init__.py").read_text() == "VERSION = 1\n"


def _check(wheel: Path, series: Path, export: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "vimesync", "patches", "check", "--json", "--no-cache"]
    cmd += ["--source", str(wheel), "--series", str(series), "--strip", "1", "--export", str(export)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _series(tmp_path: Path) -> Path:
    folder = tmp_path / "patches"
    folder.mkdir()
    (folder / "one.patch").write_text(
        "--- a/eng/__init__.py\n+++ b/eng/__init__.py\n@@ -1 +1 @@\n-VERSION = 1\n+VERSION = 2\n"
    )
    (folder / "series").write_text("one.patch\n")
    return folder / "series"


def test_patches_check_exports_the_whole_patched_wheel(tmp_path: Path) -> None:
    export = tmp_path / "tree"
    proc = _check(_wheel(tmp_path), _series(tmp_path), export)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    assert (export / "eng/__init__.py").read_text() == "VERSION = 2\n"
    assert (export / "eng/_C.abi3.so").stat().st_size == BIG


def test_a_failed_export_leaves_nothing_and_the_next_run_can_use_the_folder(tmp_path: Path) -> None:
    export = tmp_path / "tree"
    series = _series(tmp_path)
    proc = _check(_wheel(tmp_path, corrupt=True), series, export)
    assert proc.returncode == 2 and "corrupt member" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not export.exists()
    export.mkdir()  # an empty folder given: left empty on failure, too
    proc = _check(_wheel(tmp_path, corrupt=True), series, export)
    assert proc.returncode == 2 and list(export.iterdir()) == []
    assert _check(_wheel(tmp_path), series, export).returncode == 0
