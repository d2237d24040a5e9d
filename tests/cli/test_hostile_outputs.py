"""Outputs (--export, report --output) are never written through a symlink a pull request commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.hostile import assert_refused, cli

pytestmark = pytest.mark.slow  # the CLI as real processes


def test_export_through_a_committed_symlink_is_refused(checkout: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (checkout / "out").symlink_to(victim)
    assert_refused(cli("patches", "check", "--export", "out", cwd=checkout), "--export", "symbolic link")
    assert_refused(
        cli("patches", "check", "--export", "out/tree", cwd=checkout), "out: it is a symbolic link"
    )
    assert list(victim.iterdir()) == []


def test_export_into_a_fresh_folder_still_works(checkout: Path) -> None:
    proc = cli("patches", "check", "--export", "out/tree", cwd=checkout)
    assert proc.returncode == 0, proc.stderr
    assert (checkout / "out/tree/eng/util.py").read_text().endswith("return 2\n")


def test_report_output_through_a_committed_symlink_is_refused(checkout: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.md"
    victim.write_text("keep me\n")
    (checkout / "report.md").symlink_to(victim)
    proc = cli("report", "--output", "report.md", cwd=checkout)
    assert_refused(proc, "--output report.md", "symbolic link")
    assert victim.read_text() == "keep me\n"
