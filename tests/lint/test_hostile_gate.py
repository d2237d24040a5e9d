"""Red-team regressions for ``patches lint``/``describe`` (and the series they share with
``patches check``): hostile series entries are findings or one-line refusals, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.hostile import assert_refused, cli, make_checkout, make_stack

pytestmark = pytest.mark.slow  # the CLI as real processes


@pytest.mark.parametrize(
    "args",
    [
        ("patches", "check"),
        ("patches", "describe", "0001-a.patch", "--description", "x"),
    ],
)
def test_a_nul_in_a_series_entry_is_refused_naming_the_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    checkout = make_checkout(tmp_path, make_stack(tmp_path))
    before = (checkout / "patches/0001-a.patch").read_bytes()
    (checkout / "patches/series").write_bytes(b"a\x00b.patch\n0001-a.patch\n")
    proc = cli(*args, cwd=checkout)
    assert_refused(proc, "patches/series:1", "a NUL byte in the path")
    assert (checkout / "patches/0001-a.patch").read_bytes() == before


def test_lint_reports_a_nul_in_a_series_entry_as_a_finding(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path, make_stack(tmp_path))
    (checkout / "patches/series").write_bytes(b"a\x00b.patch\n0001-a.patch\n")
    proc = cli("patches", "lint", cwd=checkout)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "patches/series:1: S004 'a\\x00b.patch': a NUL byte in the path" in proc.stdout


def test_mixed_line_endings_are_capped_per_patch(tmp_path: Path) -> None:
    from vimesync.lint import lint_series
    from vimesync.lint.rules import MAX_WHITESPACE_FINDINGS

    text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n" + "".join(
        f"@@ -{i * 10 + 1} +{i * 10 + 1} @@\n-a\n+b\r\n" for i in range(500)
    )
    (tmp_path / "p.patch").write_bytes(text.encode())
    (tmp_path / "series").write_text("p.patch\n")
    found = [f for f in lint_series(tmp_path / "series").findings if f.code == "W002"]
    assert len(found) == MAX_WHITESPACE_FINDINGS + 1
    assert found[-1].message == f"and {500 - MAX_WHITESPACE_FINDINGS} more hunks with mixed line endings"


def test_strict_offsets_are_capped_per_patch(tmp_path: Path) -> None:
    from vimesync.lint import lint_series
    from vimesync.lint.run import MAX_PER_CODE
    from vimesync.patches.model import HunkOffset, PatchResult

    text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n" + "".join(
        f"@@ -{i * 10 + 1} +{i * 10 + 1} @@\n-a\n+b\n" for i in range(100)
    )
    (tmp_path / "p.patch").write_bytes(text.encode())
    (tmp_path / "series").write_text("p.patch\n")
    offsets = tuple(HunkOffset("x", i, 3) for i in range(1, 101))
    result = PatchResult("p.patch", True, offsets=offsets)
    found = [
        f for f in lint_series(tmp_path / "series", offsets=lambda: (result,)).findings if f.code == "O001"
    ]
    assert len(found) == MAX_PER_CODE + 1 and found[-1].message == f"and {100 - MAX_PER_CODE} more like it"
