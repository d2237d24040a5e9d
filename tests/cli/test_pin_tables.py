"""``pin scan`` and ``pin bump`` at an archive pin (a wheel: no commit to compare), as text, JSON
and SVG: the release holding the pinned archive's bytes is "(the current pin)", one of the same
size with other bytes is not; piped, a line of the list layout ends with its last word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run_cli
from tests.builders.stack import ENGINE
from tests.builders.wheels import digest, make_wheel

DIFF = (
    "--- a/eng/core.py\n+++ b/eng/core.py\n@@ -13,3 +13,3 @@\n"
    " def f3(x):\n-    return x + 3\n+    return x + 3  # p\n \n"
)
PIN = "(the current pin)"


@pytest.fixture()
def down(tmp_path: Path) -> Path:
    """A downstream pinned to wheels/eng-1.0 (by its sha256), with 1.1 (other lines) and 1.0b (the
    same size as 1.0, one byte of it other) beside it."""
    wheels = tmp_path / "wheels"
    pinned = make_wheel(wheels, version="1.0", extra="a")
    make_wheel(wheels, version="1.1", files={"eng/core.py": "# 1.1\n" + ENGINE["eng/core.py"]})
    twin = make_wheel(tmp_path / "twin", version="1.0", extra="b")
    twin.rename(wheels / "eng-1.0b-py3-none-any.whl")
    assert (wheels / "eng-1.0b-py3-none-any.whl").stat().st_size == pinned.stat().st_size
    repo = tmp_path / "down"
    (repo / ".git").mkdir(parents=True)
    (repo / "pins").mkdir()
    (repo / "patches").mkdir()
    (repo / "patches/p.patch").write_text("Description: p\n---\n" + DIFF)
    (repo / "patches/series").write_text("p.patch\n")
    (repo / "pins/eng.toml").write_text(
        '[engine]\nname = "eng"\nseries = "../patches/series"\n'
        f'source = "../../wheels/eng-1.0-py3-none-any.whl"\nsha256 = "{digest(pinned)}"\n'
    )
    (repo / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    return repo


def _to(*versions: str) -> list[str]:
    return [a for v in versions for a in ("--to", f"../wheels/eng-{v}-py3-none-any.whl")]


def _line(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(start))


@pytest.mark.slow
def test_scan_marks_the_release_that_is_the_pinned_archive(down: Path, tmp_path: Path) -> None:
    from defusedxml import ElementTree

    svg = tmp_path / "m.svg"
    done = run_cli("pin", "scan", *_to("1.1", "1.0", "1.0b"), "--svg", str(svg), cwd=down)
    assert done.returncode == 0, done.stderr
    assert PIN in _line(done.stdout, "  eng-1.0: ")
    assert PIN not in _line(done.stdout, "  eng-1.1: ")
    assert PIN not in _line(done.stdout, "  eng-1.0b: ")  # the same size, other bytes
    root = ElementTree.fromstring(svg.read_bytes())
    frames = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "pin"]
    assert len(frames) == 1
    done = run_cli("pin", "scan", *_to("1.1", "1.0", "1.0b"), "--json", cwd=down)
    assert [r["pinned"] for r in json.loads(done.stdout)["releases"]] == [False, True, False]


@pytest.mark.slow
@pytest.mark.parametrize(("version", "pinned"), [("1.0", True), ("1.1", False), ("1.0b", False)])
def test_bump_says_when_its_target_is_the_pinned_archive(down: Path, version: str, pinned: bool) -> None:
    done = run_cli("pin", "bump", *_to(version), cwd=down)
    assert done.returncode == 0, done.stderr
    assert (PIN in _line(done.stdout, "  from ")) is pinned


@pytest.mark.slow
@pytest.mark.parametrize("command", ["scan", "bump"])
def test_piped_list_lines_carry_no_trailing_padding(down: Path, command: str) -> None:
    """Too narrow for the table, the list layout: each line ends with its last word."""
    versions = ("1.1", "1.0") if command == "scan" else ("1.1",)
    done = run_cli("pin", command, *_to(*versions), cwd=down, COLUMNS="30")
    assert done.returncode == 0, done.stderr
    listed = [ln for ln in done.stdout.splitlines() if ln.startswith("       ")]
    assert listed, done.stdout  # the list layout, indented under each patch
    assert [ln for ln in done.stdout.splitlines() if ln != ln.rstrip()] == []
