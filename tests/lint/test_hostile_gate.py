"""Red-team regressions for ``patches lint``/``describe`` (and the series they share with
``patches check``): hostile series entries are findings or one-line refusals, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.hostile import assert_refused, cli, make_checkout, make_stack


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
