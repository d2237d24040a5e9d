"""pytest node ids for a regression matrix (``vimesync sop regress``): which of the node ids a
maintainer named a commit holds, and the node id each JUnit testcase came from.

``sop regress`` collects first (the node ids pytest itself reports for the named files, written
by a small in-process plugin, never read from the console text) and then runs the named ids
that were collected, with ``--junitxml``. A JUnit testcase carries ``classname`` and ``name``,
which pytest derives from the node id (``tests/test_calc.py::TestA::test_b[1-2]`` ->
``tests.test_calc.TestA`` and ``test_b[1-2]``); that derivation is repeated here for every
collected node id, so each testcase maps back to the exact id it came from instead of being
guessed from a dotted name (a folder with a dot, a class, parameters holding ``::``). Pure:
data in, data out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from vimesync.sop.junitread import clean_id


def junit_id(nodeid: str) -> str:
    """The id the JUnit reader gives the testcase of ``nodeid`` (``classname::name``), as pytest's
    ``junitxml`` (``mangle_test_address``) derives its attributes from the node id."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname, name = ".".join(names[:-1]), names[-1]
    return clean_id(f"{classname}::{name}" if classname else name)


def covers(named: str, nodeid: str) -> bool:
    """Whether the node id a maintainer named (a folder, a file, a class, a function, one
    parametrized case) covers the collected ``nodeid``."""
    if nodeid == named:
        return True
    if named.endswith("/"):
        return nodeid.startswith(named)
    return nodeid.startswith((named + "::", named + "[", named + "/"))


def present(named: Sequence[str], collected: Iterable[str]) -> tuple[str, ...]:
    """The named node ids that cover at least one collected test, in the order given."""
    ids = tuple(collected)
    return tuple(n for n in named if any(covers(n, c) for c in ids))


def by_nodeid(cases: Mapping[str, str], collected: Iterable[str]) -> dict[str, str]:
    """JUnit outcomes (by ``classname::name``) keyed by the collected node id each came from; a
    testcase no collected id accounts for (a collection error's report) keeps its JUnit id."""
    back = {junit_id(c): clean_id(c) for c in collected}
    out: dict[str, str] = {}
    for case, outcome in cases.items():
        out[back.get(case, case)] = outcome
    return out
