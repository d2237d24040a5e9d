"""``vimesync sop regress`` as a use case: the named tests at the baseline (or ``--before REV``)
and at the head, each in a temporary worktree of exactly that commit, with the interpreter
``--python`` names, and recorded as a before/after matrix (:mod:`vimesync.sop.regress`).

Each side is two pytest runs at most: the named tests' files collected (the node ids pytest
reports, :mod:`vimesync.sop.pytestids`), so a named test the commit does not hold is "not
present" without a run of its own; then ``python -m pytest -p no:cacheprovider --junitxml`` of
the named ids it holds, into our scratch folder, read with the JUnit reader and keyed back by the
node ids collected (``tests/test_calc.py::test_add``, not JUnit's ``tests.test_calc::test_add``).

It runs the repository's tests, so it is refused in an untrusted checkout, as pre-commit is."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vimesync.app.evidence import RecordResult, evidence_heads
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.recordchecks import refuse_modified, replaced_record
from vimesync.app.result import Kind
from vimesync.app.toolruns import (
    check_timeout,
    program,
    records_text,
    refuse_changed_records,
    refuse_untrusted,
)
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput, JobStopped
from vimesync.text import plural

MAX_TESTS = 200
NODEID = re.compile(r"[A-Za-z0-9_./-][^\x00-\x1f\x7f]{0,499}")
# pytest's exits: 0 all passed, 1 some failed, 2 interrupted (a collection error), 3 internal
# error, 4 usage error (a node id not found), 5 nothing collected.
_RAN = (0, 1, 2)


@dataclass(frozen=True)
class RegressRequest:
    tests: tuple[str, ...]  # pytest node ids, relative to the repository root
    before: str | None = None  # default: the sync's baseline
    python: str | None = None  # X.Y (found outside the checkout) or an absolute path; default: this one
    name: str | None = None  # the matrix's name in the report (default "regression matrix")
    timeout: float | None = None  # seconds per pytest run
    replace: bool = False  # a matrix of the same name at the evidence head may be replaced


def check_nodeid(test: str) -> str:
    """A node id naming a test of the repository: relative, no ``..``, one line, not an option."""
    path = test.split("::", 1)[0]
    parts = path.split("/")
    if not NODEID.fullmatch(test) or test.startswith("-") or ".." in parts or path.startswith("/"):
        raise BadInput(
            f"--test {test[:80]!r}: expected a pytest node id inside the repository (tests/x.py::name)"
        )
    return test


def interpreter(value: str | None, checkout: Path) -> str:
    """``--python``: ``X.Y`` looked up as ``patches check --python`` does (absolute PATH entries
    outside the checkout), or an absolute path outside it; None: the running interpreter."""
    if value is None:
        return sys.executable
    m = re.fullmatch(r"(\d)\.(\d{1,2})", value)
    if m:
        from vimesync.pycheck.interp import find_interpreter

        return find_interpreter((int(m.group(1)), int(m.group(2)))).executable
    return program(Path(value), "--python", checkout)


def regress(ws: Workspace, request: RegressRequest, *, progress: Progress = no_progress) -> RecordResult:
    """Run the tests before and after; record the matrix for the evidence head (``progress``:
    each side as it runs)."""
    from vimesync import git
    from vimesync.safefs import scratch_dir
    from vimesync.sop.regress import DEFAULT_NAME, RegressRecord, matrix, regress_values
    from vimesync.sop.results import check_name, now, write_table
    from vimesync.sop.worktree import temporary_worktree

    refuse_untrusted(ws.untrusted, "sop regress", "run the matrix on a trusted machine and commit its record")
    if not request.tests:
        raise BadInput("--test: name at least one test (a pytest node id)")
    if len(request.tests) > MAX_TESTS:
        raise BadInput(f"--test: at most {MAX_TESTS} tests per matrix")
    tests = tuple(dict.fromkeys(check_nodeid(t) for t in request.tests))
    name = check_name(request.name, "--name") if request.name is not None else DEFAULT_NAME
    timeout = check_timeout(request.timeout)
    down = ws.require_downstream()
    python = interpreter(request.python, down)
    # the baseline as given may be a name (--baseline main): the record holds the commit
    before = git.resolve(down, request.before if request.before is not None else ws.require_baseline())
    sync = ws.sync_name
    head, bound = evidence_heads(ws)
    # checked before the tests run (minutes), not after
    refuse_modified(down, ws.bookkeeping, sync)
    old = replaced_record(ws.sop_root, sync, "regress", name, bound, replace=request.replace)
    records_before = records_text(ws.sop_root, sync)
    outcomes: list[dict[str, str]] = []
    held: set[str] = set()  # the named ids either commit holds
    step = Phases(progress, "sop regress", 2)
    with scratch_dir("vimesync-regress-") as scratch:
        for side, commit in (("before", before), ("after", head)):
            # a folder of its own, named only once the run before it is over: what that run
            # wrote in our scratch folder (a pytest.ini, a conftest.py, a JUnit file) is not here
            own = Path(tempfile.mkdtemp(prefix=f"{side}-", dir=scratch))
            with (
                step(f"pytest {side} ({commit[:12]}), {plural(len(tests), 'test')}"),
                temporary_worktree(down, commit, own / "tree") as tree,
            ):
                cases, holds = _pytest(python, tree, tests, own, side, commit, timeout)
                outcomes.append(cases)
                held.update(holds)
    rec = RegressRecord(
        name=name, sha=bound, before=before, cases=matrix(outcomes[0], outcomes[1]), recorded_at=now()
    )
    from vimesync.sop.regress import MAX_CASES

    if len(rec.cases) > MAX_CASES:
        raise BadInput(f"--test: the tests named ran {len(rec.cases):,} cases; a matrix holds {MAX_CASES:,}")
    if not rec.cases:
        raise BadInput("--test: none of the tests named ran, before or after (no such tests?)")
    refuse_changed_records(ws.sop_root, sync, records_before, "pytest")
    path = write_table(ws.sop_root, sync, "regress", name, bound, regress_values(rec))
    # a typo in a node id is not a test gone at the head: said, not silently dropped
    notes = tuple(f"{t}: not found before or after" for t in tests if t not in held)
    result = RecordResult(
        sync=sync, record=rec, file=path, head=head, kind=Kind.REGRESS, judged=True, notes=notes
    )
    return result.replacing("regress", old)


# The collection run: pytest in process with a plugin writing the node ids it collected as JSON
# (argv[1]), so they are read from pytest itself, never parsed from its console text.
_COLLECT = """\
import json, sys
import pytest

class NodeIds:
    def pytest_collection_finish(self, session):
        with open(sys.argv[1], "x", encoding="utf-8") as fh:
            json.dump([item.nodeid for item in session.items], fh)

sys.exit(int(pytest.main(sys.argv[2:], plugins=[NodeIds()])))
"""
MAX_COLLECTED = 100_000  # node ids one collection run may report
MAX_COLLECTED_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class _RegressRun:
    """One side's pytest runs: where, with what, for how long."""

    python: str
    tree: Path
    scratch: Path
    side: str
    commit: str
    timeout: float

    @property
    def what(self) -> str:
        return f"pytest {self.side} ({self.commit[:12]})"

    config: Path  # the worktree's own pytest config, or an empty one of ours

    def argv(self, *args: str) -> list[str]:
        # --rootdir: node ids relative to the repository root, as the maintainer names them,
        # whatever pytest.ini a subfolder holds. pytest looks above the worktree for its config
        # and, with one there, for conftest.py files: only the worktree's own are read.
        tree = self.tree
        confined = (f"--rootdir={tree}", f"--confcutdir={tree}", "-c", str(self.config))
        return ["-p", "no:cacheprovider", "-q", *confined, *args]


def _pytest(
    python: str, tree: Path, tests: Sequence[str], scratch: Path, side: str, commit: str, timeout: float
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Each case's outcome by node id, and the named ids this commit holds. Two runs at most: the
    named tests' files collected (which named ids this commit holds; the others are not
    present), then the ones it holds run."""
    from vimesync.sop.pytestids import by_nodeid, present

    config = pytest_config(tree, tests) or _empty_config(scratch)
    run = _RegressRun(python, tree, scratch, side, commit, timeout, config)
    files = tuple(dict.fromkeys(t.split("::", 1)[0] for t in tests))
    files = tuple(f for f in files if (tree / f).exists())
    if not files:
        return {}, ()
    collected = _collect(run, files)
    held = present(tests, collected)
    if not held:
        return {}, ()
    cases: dict[str, str] = {}
    _run_tests(run, held, cases)
    return by_nodeid(cases, collected), held


def _collect(run: _RegressRun, files: Sequence[str]) -> tuple[str, ...]:
    """The node ids pytest collects from ``files`` (a file that fails to import holds none)."""
    from vimesync.safefs import loads_json, read_input

    out = run.scratch / f"{run.side}-nodeids.json"
    argv = [run.python, "-c", _COLLECT, str(out)]
    argv += run.argv("--collect-only", "--continue-on-collection-errors", "--", *files)
    code, output = _tool(run, argv)
    if code not in (*_RAN, 5) or not out.is_file():
        raise _did_not_run(run, code, output, "collect")
    text = read_input(out, max_bytes=MAX_COLLECTED_BYTES, what="collected node ids").decode(
        "utf-8", "replace"
    )
    ids = loads_json(text, where=f"{run.what}: collected node ids")
    if not isinstance(ids, list) or len(ids) > MAX_COLLECTED or not all(isinstance(i, str) for i in ids):
        raise BadInput(f"{run.what} collected more than {MAX_COLLECTED:,} tests, or not node ids")
    return tuple(ids)


def _run_tests(run: _RegressRun, tests: Sequence[str], cases: dict[str, str]) -> None:
    from vimesync.sop.junitread import read_junit

    junit = run.scratch / f"{run.side}.xml"
    argv = [run.python, "-m", "pytest", *run.argv(f"--junitxml={junit}", "--", *tests)]
    code, output = _tool(run, argv)
    if code == 5:  # collected a moment ago, none now (a collection that varies): nothing ran
        return
    if code not in _RAN or not junit.is_file():
        raise _did_not_run(run, code, output, "run")
    counts = read_junit(junit, cases=cases)
    if (code == 0) == bool(counts.failed or counts.errors) and code in (0, 1):
        # pytest's exit status and the JUnit file it was to write disagree: not pytest's file
        raise BadInput(f"{run.what}: its exit status ({code}) and its JUnit file disagree; not recorded")


def _tool(run: _RegressRun, argv: list[str]) -> tuple[int, bytes]:
    """pytest's exit status and the tail of its output (a suite may print without end: only the
    tail is kept, never a cap that stops it); BadInput when the run passed its deadline."""
    from vimesync.sop.toolrun import run_tool, tool_env

    # PYTEST_ADDOPTS is the job's environment, not the commit's: it would change what is run
    env = {k: v for k, v in tool_env({"PYTHONDONTWRITEBYTECODE": "1"}).items() if k != "PYTEST_ADDOPTS"}
    done = run_tool(argv, cwd=run.tree, timeout=run.timeout, env=env, max_output=None)
    if done.code is None:
        raise JobStopped(
            f"{run.what} stopped: it {done.stopped} (--timeout {run.timeout:g}); nothing recorded"
        )
    return done.code, done.output


def _did_not_run(run: _RegressRun, code: int, output: bytes, step: str) -> BadInput:
    from vimesync.safefs import excerpt
    from vimesync.sop.toolrun import last_line

    why = excerpt(last_line(output), 160)
    return BadInput(f"{run.what} did not {step} the tests (exit {code}): {why}")


# pytest's config files, in the order it looks for them in each folder, and the section that
# makes one its config (None: the file always is)
_CONFIGS = (
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", re.compile(r"^\[tool\.pytest(?:\.ini_options)?\]", re.M)),
    ("tox.ini", re.compile(r"^\[pytest\]", re.M)),
    ("setup.cfg", re.compile(r"^\[tool:pytest\]", re.M)),
)


def pytest_config(tree: Path, tests: Sequence[str]) -> Path | None:
    """The config file pytest would take for ``tests``, looked for as pytest does (from the
    tests' common folder upward), but never above ``tree``; a config that is a symlink, or too
    big to be one, is not taken."""
    from vimesync.errors import VimesyncError
    from vimesync.safefs import read_input

    folders = [os.path.dirname(os.path.join(tree, t.split("::", 1)[0])) or str(tree) for t in tests]
    start = Path(os.path.commonpath(folders)) if folders else tree
    for folder in (start, *start.parents):
        if folder != tree and tree not in folder.parents:
            return None
        for name, section in _CONFIGS:
            path = folder / name
            if not path.is_file() or path.is_symlink():
                continue
            if section is None:
                return path
            try:
                text = read_input(path, max_bytes=1 << 20, root=tree).decode("utf-8", "replace")
            except VimesyncError:
                continue
            if section.search(text):
                return path
    return None


def _empty_config(folder: Path) -> Path:
    path = folder / "pytest.ini"
    path.write_text("[pytest]\n")
    return path
