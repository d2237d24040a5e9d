"""parse_patched: a real git source plus the stack's changes, as ``patches check`` calls it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync.check.parse import parse_patched
from vimesync.errors import BadInput
from vimesync.sources import open_source


@pytest.fixture
def engine(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "engine")
    here = "{}.{}".format(*sys.version_info[:2])
    repo.commit(
        "pin",
        {
            "pyproject.toml": f'[project]\nname = "e"\nrequires-python = ">={here}"\n',
            "e/__init__.py": "",
            "e/old.py": "x = (\n",  # broken upstream, deleted by the stack
            "e/keep.py": "y = 1\n",
        },
    )
    return repo


def test_changes_replace_and_delete_source_files(engine: Repo, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    (scratch / "e").mkdir(parents=True)
    (scratch / "e/new.py").write_text("<<<<<<< ours\nz = 1\n=======\nz = 2\n>>>>>>> theirs\n")
    with open_source(engine.path) as src:
        report = parse_patched(
            src,
            {"e/old.py": None, "e/new.py": (scratch / "e/new.py").read_bytes(), "e/keep.py": b"y = 2\n"},
            cache_dir=tmp_path / "cache",
        )
    assert report.files == 3 and report.version_source == "requires-python in pyproject.toml"
    assert [f.path for f in report.failed] == ["e/new.py"]
    assert [m.line for m in report.conflict_markers] == [1, 3, 5]


@pytest.mark.slow
def test_a_patched_requires_python_chooses_the_grammar(engine: Repo, tmp_path: Path) -> None:
    bumped = b'[project]\nname = "e"\nrequires-python = ">=3.99"\n'
    with open_source(engine.path) as src, pytest.raises(BadInput, match="python3.99 is needed"):
        parse_patched(src, {"pyproject.toml": bumped})
    with open_source(engine.path) as src:
        assert parse_patched(src, {"pyproject.toml": bumped}, python="3.8").version == "3.8"
