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
    assert s.entries[1].path == series.parent / "sub/c.patch"
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
        ("a.patch\nmissing.patch\n", "'missing.patch' not found", 2),
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
    with pytest.raises(ConfigError, match="refusing to follow a symbolic link") as info:
        load_series(path)
    assert info.value.line == 2


def test_symlink_inside_the_folder_is_refused_too(tmp_path: Path) -> None:
    # Even a link that stays inside: a committed symlink is never followed.
    path = _stack(tmp_path, "a.patch\nalias.patch\n")
    os.symlink("a.patch", path.parent / "alias.patch")
    with pytest.raises(ConfigError, match="symbolic link"):
        load_series(path)


def test_hard_link_alias_counts_as_a_duplicate(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\nalias.patch\n")
    os.link(path.parent / "a.patch", path.parent / "alias.patch")
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


def test_series_symlink_to_proc_environ_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "patches/series"
    path.parent.mkdir()
    path.symlink_to("/proc/self/environ")
    with pytest.raises(ConfigError, match="series file refusing to follow a symbolic link"):
        load_series(path)
    with pytest.raises(ConfigError, match="series file refusing to follow a symbolic link"):
        load_series(path.parent)  # a folder: its series file is checked as well


def test_symlinked_folder_on_the_way_to_a_patch_is_refused(tmp_path: Path) -> None:
    path = _stack(tmp_path, "sub/a.patch\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/a.patch").write_text("diff\n")
    (path.parent / "sub").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match=r"'sub/a.patch'.*sub: it is a symbolic link") as info:
        load_series(path)
    assert info.value.line == 1


def test_fifo_patch_is_refused_without_blocking(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\nfifo.patch\n")
    os.mkfifo(path.parent / "fifo.patch")
    with pytest.raises(ConfigError, match="is a FIFO"):
        load_series(path)


def test_series_entry_is_quoted_short_and_escaped(tmp_path: Path) -> None:
    name = "\x1b[2J" + "A" * 200
    path = _stack(tmp_path, name + "\n")
    with pytest.raises(ConfigError, match="not found") as info:
        load_series(path)
    assert "\x1b" not in str(info.value) and len(str(info.value)) < len(str(path)) + 150


def test_total_size_of_the_series_is_capped(tmp_path: Path) -> None:
    # 5 sparse patches of 60 MiB: each under the per-patch cap, 300 MiB together.
    names = tuple(f"{i}.patch" for i in range(5))
    path = _stack(tmp_path, "".join(n + "\n" for n in names), names)
    for n in names:
        with (path.parent / n).open("r+b") as fh:
            fh.truncate(60 << 20)
    with pytest.raises(ConfigError, match="add up to more than") as info:
        load_series(path)
    assert info.value.line == 5


def test_number_of_entries_is_capped(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\n" + "a.patch -p1\n" * 10)
    from vimesync.patches import series as series_mod

    series_mod.MAX_SERIES_ENTRIES, saved = 1, series_mod.MAX_SERIES_ENTRIES
    try:
        with pytest.raises(ConfigError, match="more than 1 patches") as info:
            load_series(path)
    finally:
        series_mod.MAX_SERIES_ENTRIES = saved
    assert info.value.line == 2


def test_read_patch_refuses_a_patch_swapped_for_a_symlink(tmp_path: Path) -> None:
    path = _stack(tmp_path, "a.patch\n")
    entry = load_series(path).entries[0]
    (path.parent / "a.patch").unlink()
    (path.parent / "a.patch").symlink_to("/proc/self/environ")
    with pytest.raises(PatchError, match="a.patch: refusing to follow a symbolic link"):
        read_patch(entry)
