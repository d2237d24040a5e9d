from __future__ import annotations

import os
from pathlib import Path

import pytest

from vimesync.errors import ConfigError, PatchError
from vimesync.patches.model import SeriesEntry
from vimesync.patches.series import load_series, read_patch


def _stack(tmp_path: Path, series: str, patches: tuple[str, ...] = ("a.patch", "b.patch")) -> Path:
    d = tmp_path / "patches"
    d.mkdir()
    for name in patches:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text("diff\n")
    (d / "series").write_text(series)
    return d / "series"


def test_entries_comments_blank_lines_and_strip(tmp_path: Path) -> None:
    series = _stack(
        tmp_path,
        "# the stack\n\na.patch\n  \nsub/c.patch -p0   # trailing comment\nb.patch #x\nd#e.patch\n",
        ("a.patch", "b.patch", "sub/c.patch", "d#e.patch"),
    )
    s = load_series(series, default_strip=2)
    assert [(e.name, e.strip, e.line) for e in s.entries] == [
        ("a.patch", 2, 3),
        ("sub/c.patch", 0, 5),
        ("b.patch", 2, 6),
        ("d#e.patch", 2, 7),  # '#' inside a name is not a comment
    ]
    assert s.entries[1].path == (series.parent / "sub/c.patch").resolve()
    assert s.path == series


def test_directory_means_its_series_file(tmp_path: Path) -> None:
    series = _stack(tmp_path, "\ufeffa.patch\r\nb.patch\r\n")  # BOM and CRLF from a Windows editor
    s = load_series(series.parent)
    assert s.path == series and [e.name for e in s.entries] == ["a.patch", "b.patch"]


def test_empty_series_is_a_stack_of_no_patches(tmp_path: Path) -> None:
    assert load_series(_stack(tmp_path, "# nothing left to carry\n\n")).entries == ()


@pytest.mark.parametrize(
    ("series", "message", "line"),
    [
        ("a.patch\nmissing.patch\n", "missing.patch not found", 2),
        ("a.patch -p1 -R\n", "unsupported option '-R'.*reversed", 1),
        ("a.patch --fuzz=3\n", "unsupported option", 1),
        ("a.patch -p99999\n", "absurd", 1),
        ("a.patch\nb.patch\na.patch\n", "listed twice \\(first on line 1\\)", 3),
        ("../outside.patch\n", "leaves the series folder", 1),
        ("sub/../../outside.patch\n", "leaves the series folder", 1),
        ("/etc/passwd\n", "absolute patch path", 1),
        ("C:\\x.patch\n", "absolute patch path", 1),
        ("sub\n", "not a regular file", 1),
    ],
)
def test_bad_entries_name_series_file_and_line(tmp_path: Path, series: str, message: str, line: int) -> None:
    path = _stack(tmp_path, series)
    (path.parent / "sub").mkdir()
    (tmp_path / "outside.patch").write_text("x")
    with pytest.raises(ConfigError, match=message) as info:
        load_series(path)
    assert info.value.path == str(path) and info.value.line == line and info.value.exit_code == 2


def test_symlink_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\nlink.patch\n")
    (tmp_path / "secret").write_text("x")
    os.symlink(tmp_path / "secret", path.parent / "link.patch")
    with pytest.raises(ConfigError, match="outside the series folder") as info:
        load_series(path)
    assert info.value.line == 2


def test_symlink_inside_the_folder_is_fine_but_counts_as_a_duplicate(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\nalias.patch\n")
    os.symlink("a.patch", path.parent / "alias.patch")
    with pytest.raises(ConfigError, match="listed twice"):
        load_series(path)


def test_missing_or_unreadable_series(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="series file not found"):
        load_series(tmp_path / "nope")
    with pytest.raises(ConfigError, match="series file not found"):
        load_series(tmp_path)  # a directory without a series file
    bad = tmp_path / "series"
    bad.write_bytes(b"caf\xe9.patch\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_series(bad)


def test_read_patch_caps_size_before_reading(tmp_path: Path) -> None:
    p = tmp_path / "x.patch"
    p.write_bytes(b"0123456789")
    entry = SeriesEntry(name="x.patch", path=p, strip=1, line=1)
    assert read_patch(entry) == b"0123456789"
    with pytest.raises(PatchError, match="over the 5-byte limit"):
        read_patch(entry, max_bytes=5)


def test_a_patch_given_as_series_is_explained(tmp_path: Path) -> None:
    p = tmp_path / "fix.patch"
    p.write_text("Subject: x\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(ConfigError, match="this is a patch, not a series file") as info:
        load_series(p)
    assert info.value.hint and "series" in info.value.hint
