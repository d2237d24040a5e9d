"""parse_tree: grammar targets, the cache, conflict markers, inputs from every kind of source."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.hookworker import use_hook_worker
from vimesync.errors import BadInput
from vimesync.git import blob_oid
from vimesync.pycheck import plan
from vimesync.pycheck.cache import ParseCache
from vimesync.pycheck.channel import ParseJob
from vimesync.pycheck.interp import Interpreter, find_interpreter, running
from vimesync.pycheck.model import ConflictMarker, ParseFailure, ParseReport, PyFile, StatKey
from vimesync.pycheck.pool import ParsePool
from vimesync.pycheck.scan import WORKER_REV, ParseLimits, conflict_markers, parse_tree
from vimesync.pycheck.target import FROM_FLAG, Target
from vimesync.sources import open_source

HERE = Target(sys.version_info[:2], "running interpreter")
PEP701 = b'x = f"{\'a\' if x else "b"}"\n'  # nested same quotes: 3.12 grammar only
TYPE_ALIAS = b"type Vector = list[float]\n"


def exact(version: tuple[int, int]) -> Interpreter:
    """A real pythonX.Y (skip when this machine has none)."""
    try:
        found = find_interpreter(version)
    except BadInput:
        pytest.skip(f"no python{version[0]}.{version[1]} on this machine")
    if found.feature_version:
        pytest.skip(f"no python{version[0]}.{version[1]} on this machine")
    return found


def parse(files: Iterable[object], **kw: object) -> ParseReport:
    kw.setdefault("target", HERE)
    kw.setdefault("interpreter", running())
    kw.setdefault("jobs", 2)
    bounds = {k: kw.pop(k) for k in ("jobs", "timeout", "max_size", "mem_limit") if k in kw}
    return parse_tree(files, limits=ParseLimits(**bounds), **kw)  # type: ignore[arg-type]


def test_reports_failures_by_path(tmp_path: Path) -> None:
    (tmp_path / "disk.py").write_bytes(b"def f(:\n")
    report = parse(
        [
            ("pkg/ok.py", b"x = 1\n"),
            ("pkg/bad.py", b"x = 1\nif x\n    pass\n"),
            ("disk.py", tmp_path / "disk.py"),
            ("stub.pyi", b"def (:\n"),  # stubs are not parsed
            ("notes.txt", b"def (:\n"),
        ]
    )
    assert report.files == 3 and not report.ok and report.cached == 0
    assert report.failed == (
        ParseFailure("disk.py", 1, "SyntaxError: invalid syntax", 7),
        ParseFailure("pkg/bad.py", 2, "SyntaxError: expected ':'", 5),
    )
    assert report.version == HERE.text and report.interpreter == running().describe()


def test_compiler_only_errors_fail_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "disk.py").write_bytes(b"def f():\n    pass\nnonlocal x\n")
    files = [
        ("ret.py", b"x = 1\nreturn x\n"),
        ("aw.py", b"import asyncio\nawait asyncio.sleep(0)\n"),
        ("dup.py", b"def f(a, a):\n    pass\n"),
        ("glob.py", b"def f():\n    x = 1\n    global x\n"),
        ("disk.py", tmp_path / "disk.py"),
        ("ok.py", b"async def f():\n    await g()\n"),
    ]
    report = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert [(f.path, f.line, f.message) for f in report.failed] == [
        ("aw.py", 2, "SyntaxError: 'await' outside function"),
        ("disk.py", 3, "SyntaxError: nonlocal declaration not allowed at module level"),
        ("dup.py", 1, "SyntaxError: duplicate argument 'a' in function definition"),
        ("glob.py", 3, "SyntaxError: name 'x' is assigned to before global declaration"),
        ("ret.py", 2, "SyntaxError: 'return' outside function"),
    ]


def test_312_syntax_needs_the_312_grammar() -> None:
    files = [("new.py", TYPE_ALIAS), ("fstr.py", PEP701)]
    old = parse(files, target=Target((3, 11), FROM_FLAG), interpreter=exact((3, 11)))
    assert {f.path for f in old.failed} == {"new.py", "fstr.py"} and old.version == "3.11"
    py312 = exact((3, 12))
    new = parse(files, target=Target((3, 12), FROM_FLAG), interpreter=py312)
    assert new.ok and new.version == "3.12" and "3.12" in new.interpreter


def test_older_target_through_feature_version() -> None:
    fv = Interpreter(sys.executable, tuple(sys.version_info[:3]), feature_version=(3, 7))  # type: ignore[arg-type]
    report = parse([("w.py", b"if (n := 1):\n    pass\n")], target=Target((3, 7), FROM_FLAG), interpreter=fv)
    assert [f.path for f in report.failed] == ["w.py"] and "feature_version=3.7" in report.interpreter


def test_cache_hits_misses_and_progress(tmp_path: Path) -> None:
    cache = ParseCache(tmp_path / "cache")
    files = [(f"m{i}.py", b"x = %d\n" % i) for i in range(50)] + [("bad.py", b"(\n")]
    first = parse(files, cache=cache)
    assert first.cached == 0 and [f.path for f in first.failed] == ["bad.py"]
    seen: list[tuple[int, int]] = []
    files[3] = ("m3.py", b"x = 'changed'\n")
    second = parse(files, cache=cache, progress=lambda d, t: seen.append((d, t)))
    assert second.cached == 50 and second.failed == first.failed  # a cached failure is still a failure
    assert seen[0] == (50, 51) and seen[-1] == (51, 51)
    assert parse(files, cache=ParseCache(tmp_path / "cache", enabled=False)).cached == 0


def test_crashes_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_hook_worker(monkeypatch, tmp_path)
    cache = ParseCache(tmp_path)
    files = [("boom.py", b"# vimesync-test: crash\n"), ("ok.py", b"x = 1\n")]
    for _ in range(2):
        report = parse(files, cache=cache, jobs=1)
        assert report.failed == (ParseFailure("boom.py", None, "parser crashed (exit code 70)"),)
        assert any("restarted" in n for n in report.notes)
    assert report.cached == 1


def test_too_large_files_are_failures_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"x = 1\n" * 100)
    report = parse([("big.py", tmp_path / "big.py"), ("mem.py", b"y = 2\n" * 100)], max_size=200)
    assert [f.path for f in report.failed] == ["big.py", "mem.py"]
    assert all("too large" in f.message for f in report.failed)


def test_conflict_markers_only_in_touched_files() -> None:
    conflicted = b"a = 1\n<<<<<<< HEAD\nb = 2\n=======\nb = 3\n>>>>>>> theirs\n"
    files = [("touched.py", conflicted), ("untouched.py", conflicted), ("CMakeLists.txt", conflicted)]
    report = parse(files, touched={"touched.py", "CMakeLists.txt", "deleted.py"})
    assert [m.path for m in report.conflict_markers] == ["CMakeLists.txt"] * 3 + ["touched.py"] * 3
    assert report.conflict_markers[3:] == (
        ConflictMarker("touched.py", 2, "<<<<<<< HEAD"),
        ConflictMarker("touched.py", 4, "======="),
        ConflictMarker("touched.py", 6, ">>>>>>> theirs"),
    )
    assert {f.path for f in report.failed} == {"touched.py", "untouched.py"}


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (b'"""\nTitle\n=======\n"""\n', []),  # a reStructuredText underline alone is no conflict
        (b"x\r\n<<<<<<< ours\r\ny\r\n=======\r\n>>>>>>>\r\n", [2, 4, 5]),
        (b"<<<<<<<< eight\n >>>>>>> indented\n", []),
        (b"|||||||\n>>>>>>> b\n", [1, 2]),
    ],
)
def test_marker_shapes(text: bytes, lines: list[int]) -> None:
    assert [m.line for m in conflict_markers("f", text)] == lines


def test_git_source_reads_blobs_only_on_a_miss(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "engine")
    repo.commit("c", {f"pkg/m{i}.py": f"x = {i}\n" for i in range(20)} | {"pkg/bad.py": "(\n"})
    cache = ParseCache(tmp_path / "cache")
    loaded: list[list[str]] = []
    with open_source(repo.path) as src:

        def loader(paths: list[str]) -> Iterator[tuple[str, bytes]]:
            loaded.append(paths)
            return src.read_many(paths)

        files = src.python_files()
        assert all(f.oid == blob_oid(src.read(f.path)) for f in files)  # git ids are content keys
        first = parse(files, cache=cache, loader=loader)
        assert [f.path for f in first.failed] == ["pkg/bad.py"]
        assert sorted(loaded[0]) == sorted(f.path for f in files)
        loaded.clear()
        patched = PyFile("pkg/m0.py", data=b"x = 'patched'\n")  # the stack's version wins: last one
        second = parse([*files, patched], cache=cache, loader=loader, touched={"pkg/m0.py"})
        assert second.cached == 20 and loaded == [] and second.files == 21


def test_a_directory_tree_hits_the_entries_of_its_git_twin(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "engine")
    repo.commit("c", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    cache = ParseCache(tmp_path / "cache")
    with open_source(repo.path) as src:
        parse(src.python_files(), cache=cache, loader=src.read_many)
    repo.path.joinpath(".git").rename(tmp_path / "moved.git")  # now a plain directory
    with open_source(repo.path) as src:
        assert src.info.kind == "directory"
        assert parse(src.python_files(), cache=cache).cached == 2


def test_zip_members_through_the_loader(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "e.whl", "w") as zf:
        zf.writestr("e/a.py", "x = 1\n")
        zf.writestr("e/b.py", "x = (\n")
    with open_source(tmp_path / "e.whl") as src:
        report = parse(src.python_files(), loader=src.read_many)
    assert [f.path for f in report.failed] == ["e/b.py"]


@pytest.mark.slow
def test_zip_members_read_to_be_hashed_are_held_only_up_to_a_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 16 members of 1 MiB (300 x 9.9 MiB in the report: 3 GB held at once); a 2 MiB budget here.
    import tracemalloc
    import zipfile

    from vimesync.pycheck import plan

    monkeypatch.setattr(plan, "MAX_HELD", 2 << 20)
    with zipfile.ZipFile(tmp_path / "e.whl", "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(16):
            zf.writestr(f"e/m{i}.py", b"# %d\n" % i + b"#" * (1 << 20) + b"\n")
        zf.writestr("e/bad.py", b"x = (\n")
    with open_source(tmp_path / "e.whl") as src:
        tracemalloc.start()
        try:
            report = parse(src.python_files(), loader=src.read_many, jobs=1)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert report.files == 17 and [f.path for f in report.failed] == ["e/bad.py"]
    assert peak < 8 << 20  # the budget plus members in flight, not all 16 MiB


def test_binary_files_have_no_markers() -> None:
    assert conflict_markers("x.bin", b"\0\n<<<<<<< a\n>>>>>>> b\n") == []


def test_identical_contents_parse_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_hook_worker(monkeypatch, tmp_path)
    cache = ParseCache(tmp_path)
    files = [(f"p{i}/__init__.py", b"") for i in range(30)] + [(f"b{i}.py", b"(\n") for i in range(3)]
    files += [("alloc.py", b"# vimesync-test: alloc\n")]
    report = parse(files, cache=cache, mem_limit=1 << 30)
    assert report.files == 34 and [f.path for f in report.failed] == ["alloc.py", "b0.py", "b1.py", "b2.py"]
    again = parse(files, cache=cache, mem_limit=1 << 30)
    assert again.cached == 33 and again.failed == report.failed  # our memory cap's MemoryError is not cached


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every on-disk file the parser reads (into the list, by tree path)."""
    reads: list[str] = []
    real = plan.read_file_stat

    def counting(f: PyFile, cap: int) -> object:
        reads.append(f.path)
        return real(f, cap)

    monkeypatch.setattr(plan, "read_file_stat", counting)
    return reads


def _listed(tree: Path, *names: str) -> list[PyFile]:
    """On-disk inputs as a directory source lists them: with their lstat key."""
    out = []
    for n in names:
        st = os.lstat(tree / n)
        out.append(PyFile(n, st.st_size, file=tree / n, stat=StatKey(st.st_size, st.st_mtime_ns, st.st_ino)))
    return out


def test_unchanged_files_on_disk_are_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_reads(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, text in (("a.py", b"x = 1\n"), ("b.py", b"def (:\n"), ("c.py", b"y = 2\n")):
        (tree / name).write_bytes(text)
        os.utime(tree / name, ns=(1_000_000_000, 1_000_000_000))  # long before the cache's write time
    files = _listed(tree, "a.py", "b.py", "c.py")
    first = parse(files, cache=ParseCache(tmp_path / "cache"))
    # A cold cache: the workers read and key the files; this process reads none.
    assert reads == [] and [f.path for f in first.failed] == ["b.py"]
    second = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == [] and second.cached == 3 and second.failed == first.failed
    (tree / "c.py").write_bytes(b"y = (2\n")  # changed: new size and mtime
    os.utime(tree / "c.py", ns=(2_000_000_000, 2_000_000_000))
    files = _listed(tree, "a.py", "b.py", "c.py")
    third = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == ["c.py"] and [f.path for f in third.failed] == ["b.py", "c.py"]
    # Another interpreter has no outcome for the unread files: they are read (by us) and parsed.
    reads.clear()
    fv = Interpreter(sys.executable, tuple(sys.version_info[:3]), feature_version=(3, 8))  # type: ignore[arg-type]
    other = parse(files, cache=ParseCache(tmp_path / "cache"), interpreter=fv)
    assert sorted(reads) == ["a.py", "b.py", "c.py"] and other.cached == 0
    assert [f.path for f in other.failed] == ["b.py", "c.py"]


def test_racy_file_changed_within_the_cache_time_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's racy-git rule: a record whose mtime is not older than the cache's write time is not
    trusted, so a same-size edit with the mtime reset to that time is still seen."""
    stamp = 1_700_000_000_000_000_000
    monkeypatch.setattr(ParseCache, "fs_now", lambda self: stamp)
    reads = _counting_reads(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "racy.py").write_bytes(b"x = 1\n")
    (tree / "old.py").write_bytes(b"z = 1\n")
    os.utime(tree / "racy.py", ns=(stamp, stamp))  # modified in the tick the cache was written
    os.utime(tree / "old.py", ns=(stamp - 1, stamp - 1))
    files = _listed(tree, "racy.py", "old.py")
    assert parse(files, cache=ParseCache(tmp_path / "cache")).ok
    inode = (tree / "racy.py").stat().st_ino
    with open(tree / "racy.py", "r+b") as fh:  # same inode, same size, then the mtime reset
        fh.write(b"x = (\n")
    os.utime(tree / "racy.py", ns=(stamp, stamp))
    assert (tree / "racy.py").stat().st_ino == inode
    assert _listed(tree, "racy.py", "old.py") == files  # the same keys as when cached
    reads.clear()
    report = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == ["racy.py"]  # re-hashed; old.py is older than the cache time: trusted, unread
    assert [(f.path, f.line) for f in report.failed] == [("racy.py", 1)]


def test_a_cold_run_keys_files_in_the_workers_and_records_what_they_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No result of this interpreter cached: this process reads no file, the workers read, key and
    parse them; the blob ids and stats they report make the next run read nothing at all."""
    reads = _counting_reads(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    texts = {"a.py": b"x = 1\n", "b.py": b"def (:\n", "pkg/__init__.py": b"", "pkg/c.py": b""}
    for name, text in texts.items():
        (tree / name).parent.mkdir(exist_ok=True)
        (tree / name).write_bytes(text)
        os.utime(tree / name, ns=(1_000_000_000, 1_000_000_000))
    files = _listed(tree, *texts)
    first = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == [] and first.cached == 0 and [f.path for f in first.failed] == ["b.py"]
    second = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == [] and second.cached == 4 and second.failed == first.failed
    # The same contents elsewhere (a new scratch copy) hit by content: now this process keys them.
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    third = parse(_listed(copy, *texts), cache=ParseCache(tmp_path / "cache"))
    assert sorted(reads) == sorted(texts) and third.cached == 4 and [f.path for f in third.failed] == ["b.py"]


def test_a_cold_run_reports_a_file_swapped_for_a_symlink_and_caches_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed as a regular file, a symlink when its worker opens it: read through by no one."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_bytes(b"x = 1\n")
    (tmp_path / "outside.py").write_bytes(b"def (:\n")
    files = _listed(tree, "a.py")
    (tree / "a.py").unlink()
    (tree / "a.py").symlink_to(tmp_path / "outside.py")
    cache = ParseCache(tmp_path / "cache")
    report = parse(files, cache=cache)
    assert [(f.path, f.message.split(":")[0]) for f in report.failed] == [("a.py", "cannot read file")]
    assert not cache.has_results(f"{running().cache_id}/w{WORKER_REV}")


def test_a_file_the_pool_never_answers_for_fails_and_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever goes wrong between the plan and the pool, a file is never passed unparsed."""
    real = ParsePool.run

    def loses_the_last(self: ParsePool, jobs: Iterable[ParseJob], total: int, on_result: object) -> None:
        real(self, list(jobs)[:-1], total, on_result)  # type: ignore[arg-type]

    monkeypatch.setattr(ParsePool, "run", loses_the_last)
    cache = ParseCache(tmp_path / "cache")
    report = parse([("a.py", b"x = 1\n" * 100), ("b.py", b"y = 2\n")], cache=cache)
    assert [(f.path, f.message) for f in report.failed] == [("b.py", "not parsed: the parser gave no answer")]
    monkeypatch.setattr(ParsePool, "run", real)
    again = parse([("a.py", b"x = 1\n" * 100), ("b.py", b"y = 2\n")], cache=cache)
    assert again.failed == () and again.cached == 1


def test_outcomes_saved_during_the_run_are_all_kept_and_outlast_an_interruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is written while the workers parse (every SAVE_ROWS rows, then the rest): a cold
    run of 40 files leaves all 40 outcomes and stat records, so the next run reads none; a run
    stopped half way (Ctrl-C) keeps what it had saved."""
    from vimesync.pycheck import scan

    monkeypatch.setattr(scan, "SAVE_ROWS", 6)
    reads = _counting_reads(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    names = [f"m{i:02}.py" for i in range(40)]
    for i, name in enumerate(names):
        (tree / name).write_bytes(b"x = (\n" if i % 7 == 0 else f"x = {i}\n".encode())
        os.utime(tree / name, ns=(1_000_000_000, 1_000_000_000))
    files = _listed(tree, *names)
    first = parse(files, cache=ParseCache(tmp_path / "cache"))
    second = parse(files, cache=ParseCache(tmp_path / "cache"))
    assert reads == [] and first.cached == 0 and second.cached == 40 and second.failed == first.failed
    assert len(first.failed) == 6

    real = ParseCache.put
    saved: list[int] = []

    def interrupted(self: ParseCache, env: str, results: Iterable[Any], stats: Iterable[Any] = ()) -> None:
        results, stats = list(results), list(stats)
        if results and saved:
            raise KeyboardInterrupt
        if results:
            saved.append(len(results))
        real(self, env, results, stats)

    monkeypatch.setattr(ParseCache, "put", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parse(files, cache=ParseCache(tmp_path / "other"))
    monkeypatch.setattr(ParseCache, "put", real)
    again = parse(files, cache=ParseCache(tmp_path / "other"))
    assert saved and 0 < saved[0] < 40 and again.cached == saved[0]


def test_the_write_after_the_last_answer_holds_only_the_last_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TAIL_ANSWERS files left, what the run has is saved while the workers parse them:
    the write nothing overlaps, after the last answer, is of those files only."""
    from vimesync.pycheck import scan

    monkeypatch.setattr(scan, "SAVE_ROWS", 10**6)
    monkeypatch.setattr(scan, "TAIL_ANSWERS", 5)
    tree = tmp_path / "tree"
    tree.mkdir()
    names = [f"m{i:02}.py" for i in range(40)]
    for i, name in enumerate(names):
        (tree / name).write_bytes(f"x = {i}\n".encode() * (i + 1))
    real = ParseCache.put
    sizes: list[tuple[int, int]] = []

    def put(self: ParseCache, env: str, results: Iterable[Any], stats: Iterable[Any] = ()) -> None:
        results, stats = list(results), list(stats)
        if results or stats:
            sizes.append((len(results), len(stats)))
        real(self, env, results, stats)

    monkeypatch.setattr(ParseCache, "put", put)
    report = parse(_listed(tree, *names), cache=ParseCache(tmp_path / "cache"))
    assert report.failed == () and sizes == [(35, 35), (5, 5)]
