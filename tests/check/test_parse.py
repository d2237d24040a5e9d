"""parse_patched: a real git source plus the stack's changes, as ``patches check`` calls it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders.gitrepo import Repo
from vimesync.check import parse
from vimesync.check import run as check_run
from vimesync.check.model import CheckOptions
from vimesync.check.parse import (
    _at_or_below,
    _declared_target,
    _left_alone,
    begin_patched,
    interpreter_prefetched,
    parse_patched,
)
from vimesync.check.run import run_check
from vimesync.errors import BadInput
from vimesync.pycheck import interp
from vimesync.pycheck.model import PyFile
from vimesync.pycheck.pool import ParsePool
from vimesync.pycheck.target import Target
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


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _our_workers() -> list[int]:
    """Parse workers this process started that still run (a reaped one is gone from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and fields[0] not in ("Z", "X") and b"_worker.py" in cmd:
            found.append(int(entry.name))
    return found


HERE = "{}.{}".format(*sys.version_info[:2])
TREE = {
    "pyproject.toml": f'[project]\nname = "e"\nrequires-python = ">={HERE}"\n',
    "e/__init__.py": "",
    "e/big.py": "x = 1\n" * 5000,
    "e/broken.py": "def (:\n" + "y = 2\n" * 4000,
    "e/patched.py": "z = 1\n",
    "e/gone/inner.py": "w = 1\n",
    "e/small.py": "v = 1\n",
}


def test_a_parse_begun_before_the_stack_applies_reports_as_one_begun_after(tmp_path: Path) -> None:
    """The workers take the largest untouched files while the stack applies; the report is the
    same as a parse that waited, and the next run reads it all from the cache."""
    root = _tree(tmp_path / "src", TREE)
    changed = {"e/patched.py": b"z = (\n", "e/gone": b"now a file\n"}  # a folder turned into a file
    touched = set(changed)
    with open_source(root) as src:
        early = begin_patched(src, touched, cache_dir=tmp_path / "c1")
        assert early is not None and early.paths[:2] == ["e/big.py", "e/broken.py"]
        assert "e/gone/inner.py" not in early.paths and "e/patched.py" not in early.paths
        with early:
            begun = parse_patched(src, changed, cache_dir=tmp_path / "c1", early=early)
        waited = parse_patched(src, changed, cache_dir=tmp_path / "c2")
        again = parse_patched(src, changed, cache_dir=tmp_path / "c1")
    assert begun == waited and _our_workers() == []
    assert [f.path for f in begun.failed] == ["e/broken.py", "e/patched.py"]
    assert again.cached == again.files == begun.files


def _count_spawns(monkeypatch: pytest.MonkeyPatch) -> list[ParsePool]:
    """One entry per parse worker started from now on, whichever thread starts it."""
    spawned: list[ParsePool] = []
    spawn = ParsePool._spawn

    def counted(pool: ParsePool) -> Any:
        spawned.append(pool)
        return spawn(pool)

    monkeypatch.setattr(ParsePool, "_spawn", counted)
    return spawned


def test_workers_started_while_the_source_is_listed_are_those_that_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They start on the prefetch thread, before the files are chosen; the parse begun with them
    reports as one that waited, and no other worker is started for it."""
    root = _tree(tmp_path / "src", TREE)
    changed = {"e/patched.py": b"z = (\n"}
    spawned = _count_spawns(monkeypatch)
    with interpreter_prefetched(root, python=None, cache_dir=tmp_path / "c1") as ahead:
        with open_source(root) as src:
            early = begin_patched(src, set(changed), cache_dir=tmp_path / "c1", ahead=ahead)
            assert early is not None and early.paths[:2] == ["e/big.py", "e/broken.py"]
            with early:
                begun = parse_patched(src, changed, cache_dir=tmp_path / "c1", early=early)
    # (the pools after it re-parse e/broken.py under newer grammars, to label it)
    assert spawned[0] is early.pool and spawned.count(early.pool) == early.pool.jobs
    assert _our_workers() == []
    waited = _parse(root, changed, tmp_path / "c2")
    assert begun == waited and [f.path for f in begun.failed] == ["e/broken.py", "e/patched.py"]


def _parse(root: Path, changed: dict[str, bytes], cache: Path) -> Any:
    with open_source(root) as src:
        return parse_patched(src, changed, cache_dir=cache)


def test_workers_started_ahead_and_not_taken_are_stopped_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stack rewrites pyproject.toml: the grammar is decided after it applies, so nothing is
    # begun, and the workers started for the guess do not wait idle for the rest of the run.
    root = _tree(tmp_path / "src", TREE)
    spawned = _count_spawns(monkeypatch)
    with interpreter_prefetched(root, python=None, cache_dir=tmp_path / "c") as ahead:
        with open_source(root) as src:
            assert begin_patched(src, {"pyproject.toml"}, cache_dir=tmp_path / "c", ahead=ahead) is None
            assert spawned and _our_workers() == []


def test_no_worker_is_started_ahead_for_a_warm_cache_or_after_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "src", TREE)
    _parse(root, {}, tmp_path / "c")  # the cache now knows this grammar
    spawned = _count_spawns(monkeypatch)
    with interpreter_prefetched(root, python=None, cache_dir=tmp_path / "c") as ahead:
        ahead.stop()  # waits for the thread
    assert spawned == []
    with pytest.raises(KeyboardInterrupt):
        with interpreter_prefetched(root, python=None, cache_dir=tmp_path / "cold"):
            raise KeyboardInterrupt  # Ctrl-C while the source is listed
    assert spawned and _our_workers() == [] and not interp._prefetching


_PATHS = st.lists(st.sampled_from("abc"), min_size=1, max_size=4).map("/".join)


@given(st.lists(_PATHS, max_size=30, unique=True), st.sets(_PATHS, max_size=5))
def test_the_files_left_alone_are_those_chosen_path_by_path(paths: list[str], touched: set[str]) -> None:
    # A touched path may be a file or a folder of the source (a patch turned it into a file).
    files = [PyFile(p + ".py" if i % 2 else p, size=1) for i, p in enumerate(paths)]
    assert _left_alone(files, touched) == [f for f in files if not _at_or_below(f.path, touched)]


def test_the_choice_walks_a_deep_tree_without_recursion() -> None:
    deep = [PyFile("d/" * 5_000 + "x.py", size=1), PyFile("e.py", size=1)]
    assert [f.path for f in _left_alone(deep, {"d/d/d"})] == ["e.py"]
    assert _left_alone(deep, {"d/e"}) == deep


def test_no_parse_is_begun_when_the_stack_may_change_the_grammar_or_the_cache_is_warm(tmp_path: Path) -> None:
    root = _tree(tmp_path / "src", TREE)
    with open_source(root) as src:
        assert begin_patched(src, {"pyproject.toml"}, cache_dir=tmp_path / "c") is None
        assert begin_patched(src, {".python-version"}, cache_dir=tmp_path / "c") is None
        parse_patched(src, {}, cache_dir=tmp_path / "c")  # the cache now knows this grammar
        assert begin_patched(src, {"e/patched.py"}, cache_dir=tmp_path / "c") is None
    assert _our_workers() == []


def test_a_parse_begun_for_other_files_is_left_and_its_workers_stopped(tmp_path: Path) -> None:
    """A begun parse whose files in flight are not the tree's (here: one of them is now changed
    by the stack) is not used: the parse is made afresh, and nothing it began is left running."""
    root = _tree(tmp_path / "src", TREE)
    with open_source(root) as src:
        early = begin_patched(src, set(), cache_dir=tmp_path / "c")
        assert early is not None and "e/big.py" in early.paths
        with early:
            report = parse_patched(src, {"e/big.py": b"x = (\n"}, cache_dir=tmp_path / "c", early=early)
            assert _our_workers() == []
    assert [f.path for f in report.failed] == ["e/big.py", "e/broken.py"]


def test_workers_started_for_a_tree_with_nothing_to_begin_with_are_stopped(tmp_path: Path) -> None:
    # They start before the files are chosen; a tree of no Python file leaves none running.
    root = _tree(tmp_path / "src", {"README": "engine\n", "e/data.txt": "1\n"})
    with open_source(root) as src:
        assert begin_patched(src, set(), cache_dir=tmp_path / "c") is None
    assert _our_workers() == []


def test_the_scratch_tree_is_gone_before_the_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What the stack wrote is read whole first: the parse's tail does not also remove it.
    root = _tree(tmp_path / "src", {k: v for k, v in TREE.items() if k != "e/broken.py"})
    (tmp_path / "ok.patch").write_text("--- a/e/small.py\n+++ b/e/small.py\n@@ -1 +1 @@\n-v = 1\n+v = 2\n")
    (tmp_path / "series").write_text("ok.patch\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    seen = []
    real = check_run.parse_patched

    def parse_patched(*args: Any, **kwargs: Any) -> Any:
        seen.append(sorted(p.relative_to(tmp).as_posix() for p in tmp.glob("vimesync-check-*/*")))
        return real(*args, **kwargs)

    monkeypatch.setattr(check_run, "parse_patched", parse_patched)
    report = run_check(CheckOptions(source=root, series=tmp_path / "series", cache_dir=tmp_path / "c"))
    assert report.ok and seen == [[]] and list(tmp.iterdir()) == []


def test_a_stack_that_fails_to_apply_leaves_no_begun_worker(tmp_path: Path) -> None:
    root = _tree(tmp_path / "src", TREE)
    (tmp_path / "bad.patch").write_text("--- a/e/small.py\n+++ b/e/small.py\n@@ -1 +1 @@\n-nope\n+v = 2\n")
    (tmp_path / "series").write_text("bad.patch\n")
    opts = CheckOptions(source=root, series=tmp_path / "series", cache_dir=tmp_path / "c")
    report = run_check(opts)
    assert not report.ok and report.python is None and _our_workers() == []


def _wheel(root: Path, requires: str = ">=3.93") -> Path:
    (root / "e-1.0.dist-info").mkdir(parents=True)
    (root / "e-1.0.dist-info/METADATA").write_text(
        f"Metadata-Version: 2.1\nName: e\nRequires-Python: {requires}\n"
    )
    (root / "e").mkdir()
    (root / "e/__init__.py").write_text("")
    return root


def test_the_target_a_source_folder_declares_is_read_before_its_listing(tmp_path: Path) -> None:
    # What begin_patched and parse_patched resolve from the listed tree, read from the top level.
    assert _declared_target(_wheel(tmp_path / "w"), None) == Target(
        (3, 93), "Requires-Python in e-1.0.dist-info/METADATA"
    )
    assert _declared_target(tmp_path / "w", "3.91") == Target((3, 91), "--python")
    sdist = tmp_path / "s"
    sdist.mkdir()
    (sdist / "pyproject.toml").write_text('[project]\nname = "e"\nrequires-python = ">=3.90"\n')
    assert _declared_target(sdist, None) == Target((3, 90), "requires-python in pyproject.toml")


def test_no_target_is_guessed_from_a_git_source_a_file_or_through_a_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit("pin", {"pyproject.toml": '[project]\nrequires-python = ">=3.90"\n'})
    assert _declared_target(repo.path, None) is None  # its files are objects, not the folder's
    assert _declared_target(tmp_path / "repo/pyproject.toml", None) is None
    os.symlink(_wheel(tmp_path / "w"), tmp_path / "link")
    assert _declared_target(tmp_path / "link", None) is None
    outside = _wheel(tmp_path / "outside", ">=3.80")
    hostile = tmp_path / "hostile"
    (hostile / "e-1.0.dist-info").mkdir(parents=True)
    os.symlink(outside / "e-1.0.dist-info/METADATA", hostile / "e-1.0.dist-info/METADATA")
    os.symlink(outside / "e-1.0.dist-info/METADATA", hostile / "pyproject.toml")
    here = sys.version_info[:2]
    assert _declared_target(hostile, None) == Target(here, "running interpreter")  # no link followed
    monkeypatch.setattr(parse, "MAX_TOP_ENTRIES", 1)
    assert _declared_target(tmp_path / "w", None) is None  # a top level too large to look through


def test_the_check_of_a_folder_finds_its_interpreter_while_listing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The prefetched version is the one the check parses with; the thread is joined on leaving.
    asked = []
    monkeypatch.setattr(parse, "prefetch", lambda version, cache_dir, then: asked.append(version))
    here = "{}.{}".format(*sys.version_info[:2])
    src = _wheel(tmp_path / "w", f">={here}")
    (tmp_path / "series").write_text("")
    report = run_check(CheckOptions(source=src, series=tmp_path / "series"))
    assert asked == [sys.version_info[:2]] and report.python is not None and report.python.version == here
    assert not interp._prefetching
