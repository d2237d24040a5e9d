"""Node ids for a regression matrix: each JUnit testcase maps back to the node id it came from
(checked against pytest's own derivation of JUnit's attributes), and which named ids a commit
holds."""

from __future__ import annotations

import pytest
from _pytest.junitxml import mangle_test_address

from vimesync.sop.pytestids import by_nodeid, covers, junit_id, present

NODEIDS = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::test_add_n[1-2]",
    "tests/test_calc.py::TestA::test_b",
    "tests/test_calc.py::TestA::Inner::test_c[x::y]",
    "tests/sub.dir/test_d.py::test_e",
    "test_top.py::test_f[a[b]]",
    "pkg/tests/test_x.py::test_y[ünïcode]",
]


@pytest.mark.parametrize("nodeid", NODEIDS)
def test_the_junit_id_is_the_one_pytest_derives(nodeid: str) -> None:
    names = mangle_test_address(nodeid)
    classname, name = ".".join(names[:-1]), names[-1]
    assert junit_id(nodeid) == f"{classname}::{name}"


def test_each_testcase_maps_back_to_its_node_id() -> None:
    cases = {junit_id(n): "passed" for n in NODEIDS} | {"tests.test_calc": "error"}
    got = by_nodeid(cases, NODEIDS)
    assert set(got) == {*NODEIDS, "tests.test_calc"}  # a collection error keeps its JUnit id


@pytest.mark.parametrize(
    ("named", "nodeid", "expected"),
    [
        ("tests/test_calc.py", "tests/test_calc.py::test_add", True),
        ("tests", "tests/test_calc.py::test_add", True),
        ("tests/", "tests/test_calc.py::test_add", True),
        ("tests/test_calc.py::TestA", "tests/test_calc.py::TestA::test_b", True),
        ("tests/test_calc.py::test_add_n", "tests/test_calc.py::test_add_n[1-2]", True),
        ("tests/test_calc.py::test_add_n[1-2]", "tests/test_calc.py::test_add_n[1-2]", True),
        ("tests/test_calc.py::test_add", "tests/test_calc.py::test_add_n[1-2]", False),
        ("tests/test_calc.py::test_ad", "tests/test_calc.py::test_add", False),
        ("tests/test_c", "tests/test_calc.py::test_add", False),
        ("test", "tests/test_calc.py::test_add", False),
    ],
)
def test_a_named_id_covers_what_it_names(named: str, nodeid: str, expected: bool) -> None:
    assert covers(named, nodeid) is expected


def test_present_keeps_the_named_order() -> None:
    named = ["tests/test_calc.py::test_new", "tests/test_calc.py::TestA", "tests/test_calc.py::test_add"]
    assert present(named, NODEIDS) == ("tests/test_calc.py::TestA", "tests/test_calc.py::test_add")
