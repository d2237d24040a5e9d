"""vimesync.tomledit: rewrite a hand-edited TOML file keeping what people wrote, escape right, and
refuse what every TOML input refuses (symlinks, hostile nesting, bad TOML) before tomlkit sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync import tomledit
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import MAX_NESTING, loads_toml

HOSTILE_KEYS = [
    "del\x7fkey",
    "ctl\x01\x1b[2J",
    'q"uote',
    "back\\slash",
    "new\nline",
    "",
    " ",
    "a.b",
    "[x]",
    "é\u2028",
]


def test_load_set_write_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "pins.toml"
    text = '# pinned by hand\n[engine]  # the wheel we patch\nname = "sglang"  # keep\nversion = "0.5.9"\n'
    path.write_text(text)
    doc = tomledit.load(path, root=tmp_path)
    doc["engine"]["version"] = "0.5.15"  # type: ignore[index]
    tomledit.write(path, doc, root=tmp_path, what="pins")
    assert path.read_text() == text.replace("0.5.9", "0.5.15")


def test_missing_file_is_an_empty_document(tmp_path: Path) -> None:
    path = tmp_path / "sop" / "new.toml"
    doc = tomledit.load(path, root=tmp_path)
    doc["a"] = 1
    tomledit.write(path, doc, root=tmp_path, mkdirs=True, what="record")
    assert loads_toml(path.read_text(), where="x") == {"a": 1}


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_hostile_keys_and_values_round_trip_through_tomllib(tmp_path: Path, key: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text("# top\n")
    doc = tomledit.load(path, root=tmp_path)
    doc[key] = key + "\x7f\x00'''\"\"\""
    doc.setdefault("t", {})[key] = [key]  # type: ignore[index]
    tomledit.write(path, doc, root=tmp_path, what="record")
    assert loads_toml(path.read_text(), where="f") == {key: key + "\x7f\x00'''\"\"\"", "t": {key: [key]}}
    assert path.read_text().startswith("# top\n")


def test_non_utf8_value_is_bad_input_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text('a = "kept"\n')
    doc = tomledit.load(path, root=tmp_path)
    doc["a"] = "vime/\udcffbad.py"
    with pytest.raises(BadInput, match=r"not UTF-8.*nothing written"):
        tomledit.write(path, doc, root=tmp_path, what="record")
    assert path.read_text() == 'a = "kept"\n'
    assert [p.name for p in tmp_path.iterdir()] == ["f.toml"]


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("a = [" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1) + "\n", "nested"),
        ("a = 1\na = 2\n", r"f.toml:2"),
        ("x = " + "9" * 5000 + "\n", "number is too long"),
    ],
)
def test_refused_before_tomlkit_parses(tmp_path: Path, text: str, pattern: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=pattern):
        tomledit.load(path, root=tmp_path)


def test_symlink_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text('token = "x"\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f.toml").symlink_to(secret)
    with pytest.raises(ConfigError, match="symbolic link"):
        tomledit.load(repo / "f.toml", root=repo)
    with pytest.raises(ConfigError, match="symbolic link"):
        tomledit.write(repo / "f.toml", tomledit.loads("a = 1\n", where="x"), root=repo, what="record")
    assert secret.read_text() == 'token = "x"\n'
