"""The review ledger is repository content: read and written without following symlinks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from vimesync.audit.ledger import ledger_relpath, read_ledger, record, write_ledger
from vimesync.audit.model import Ledger, Review
from vimesync.errors import BadInput, ConfigError

LEDGER = Ledger(sync="a..b", reviews=(Review(path="x.py", oid="0" * 40, by="alice", at=""),))


def test_round_trip_creates_the_folders(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    write_ledger(path, LEDGER)
    assert read_ledger(path, "a..b") == LEDGER
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_symlinked_reviews_folder_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a..b.toml").write_text('sync = "a..b"\n')
    repo = tmp_path / "repo"
    (repo / "sop").mkdir(parents=True)
    (repo / "sop/reviews").symlink_to(elsewhere)
    path = repo / ledger_relpath("a..b")
    with pytest.raises(ConfigError, match="reviews: it is a symbolic link"):
        read_ledger(path, "a..b")
    with pytest.raises(ConfigError, match="reviews: it is a symbolic link"):
        write_ledger(path, LEDGER)
    assert (elsewhere / "a..b.toml").read_text() == 'sync = "a..b"\n'


def test_symlinked_ledger_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("TOKEN=x\n")
    path = tmp_path / "repo" / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.symlink_to(secret)
    with pytest.raises(ConfigError, match="symbolic link"):
        read_ledger(path, "a..b")
    with pytest.raises(ConfigError, match="symbolic link"):
        write_ledger(path, LEDGER)
    assert secret.read_text() == "TOKEN=x\n"


def test_deeply_nested_ledger_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.write_text("review = " + "[" * 10_000 + "]" * 10_000 + "\n")
    with pytest.raises(ConfigError, match="nested deeper"):
        read_ledger(path, "a..b")


def test_comments_and_unknown_keys_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.write_text(
        "# Reviewed for the 0.5 sync; ask Bob before removing entries.\n"
        'sync = "a..b"\n'
        'team = "rollout"  # not ours: kept\n\n'
        "[[review]]\n"
        "# looked at the retry loop twice\n"
        'path = "b.py"\noid = "' + "1" * 40 + '"\nby = "bob"\n'
    )
    ledger = read_ledger(path, "a..b")
    write_ledger(
        path, record(ledger, [Review(path="a.py", oid="2" * 40, by="alice", at="2026-11-30T00:00:00Z")])
    )
    text = path.read_text()
    assert "# Reviewed for the 0.5 sync; ask Bob before removing entries." in text
    assert 'team = "rollout"  # not ours: kept' in text
    assert "# looked at the retry loop twice" in text
    assert text.index('path = "a.py"') < text.index('path = "b.py"')  # still sorted by path
    again = read_ledger(path, "a..b")
    assert [r.path for r in again.reviews] == ["a.py", "b.py"]
    # A re-review of b.py replaces its fields, and its comment stays with it.
    write_ledger(path, record(again, [Review(path="b.py", oid="3" * 40, by="carol", at="")]))
    text = path.read_text()
    assert text.count("[[review]]") == 2 and "bob" not in text and "3" * 40 in text
    assert text.index("# looked at the retry loop twice") > text.index('path = "a.py"')
    # Rewriting the same ledger gives the same bytes.
    write_ledger(path, read_ledger(path, "a..b"))
    assert path.read_text() == text


HOSTILE_VALUES = [
    "del\x7fpath.py",
    "ctl\x01\x1b[31mred\x1b[0m.py",
    'quote"and\\back\\slash.py',
    "new\nline\rand\ttab.py",
    "'''triple'''.py",
    '"""triple""".py',
    "unicode \u2028 sep \u00e9 \U0001f600.py",
    "x = 1\n[[review]]\npath = 'injected'",
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_hostile_paths_and_names_round_trip_through_tomllib(tmp_path: Path, value: str) -> None:
    path = tmp_path / ledger_relpath("a..b")
    ledger = Ledger(sync=value, reviews=(Review(path=value, oid="0" * 40, by=value, at=value),))
    write_ledger(path, ledger)
    assert read_ledger(path, "a..b") == ledger  # read back with tomllib (safefs.loads_toml)
    write_ledger(path, ledger)  # and rewritten from the file tomlkit parsed
    assert read_ledger(path, "a..b") == ledger


def test_non_utf8_path_is_bad_input_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    bad = Ledger(sync="a..b", reviews=(Review(path="vime/\udcffbad.py", oid="0" * 40, by="a", at=""),))
    with pytest.raises(BadInput, match=r"path is not UTF-8"):
        write_ledger(path, bad)
    assert not path.exists()


def test_a_ledger_that_is_not_toml_is_a_config_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / ledger_relpath("a..b")
    path.parent.mkdir(parents=True)
    path.write_text('sync = "a..b"\n[[review]\n')
    with pytest.raises(ConfigError, match=r"a..b.toml:2: invalid TOML"):
        write_ledger(path, LEDGER)
    assert path.read_text() == 'sync = "a..b"\n[[review]\n'


@pytest.mark.parametrize(
    "text, needle",
    [
        ('review = "hunter2"\n', "review: expected a list"),
        ("review = [1]\n", "review[0]: expected a table"),
        ('[[review]]\noid = "a"\nby = "b"\n', "review[0].path: missing"),
        ('[[review]]\npath = ""\noid = "a"\nby = "b"\n', "review[0].path: expected a string (of 1 to"),
        ('[[review]]\npath = "p"\noid = "a"\nby = 7\n', "review[0].by: expected a string"),
        ('[[review]]\npath = "p"\noid = "a"\nby = "b"\nat = 2026-01-01\n', "review[0].at: expected a string"),
        ('sync = ["hunter2"]\n', "sync: expected a string"),
    ],
)
def test_a_ledger_of_the_wrong_shape_names_the_key_never_the_value(
    tmp_path: Path, text: str, needle: str
) -> None:
    path = tmp_path / "sop/reviews/a..b.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_ledger(path, "a..b")
    assert str(info.value).startswith(f"{path}: {needle}"), str(info.value)
    assert "hunter2" not in str(info.value)
