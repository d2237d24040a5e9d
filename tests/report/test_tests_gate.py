"""The ``tests`` gate: every suite and run ``sop/gates.toml [evidence] required`` names is recorded
green at the evidence head; anything else (not recorded, red, recorded at another head) is not."""

from __future__ import annotations

from vimesync.report.evidence import tests_gate as gate_of  # (not a test function)
from vimesync.sop.precommit import HookResult, PrecommitRecord
from vimesync.sop.regress import RegressRecord, matrix
from vimesync.sop.results import Evidence, Results, RunRecord, TestRecord

HEAD = "f" * 40
EARLIER = "3" * 40


def _evidence(*records: TestRecord | RunRecord) -> Evidence:
    tests = tuple(r for r in records if isinstance(r, TestRecord))
    runs = tuple(r for r in records if isinstance(r, RunRecord))
    return Evidence("a..b", HEAD, HEAD, Results(tests, runs))


def test_nothing_required_is_not_checked_and_says_where_to_name_them() -> None:
    g = gate_of(_evidence(TestRecord("CPU regressions", HEAD, 292)), ())
    assert g.state == "not checked" and g.command.endswith("sop/gates.toml [evidence] required")


def test_no_records_read_is_not_checked() -> None:
    assert gate_of(None, ("CPU regressions",)).state == "not checked"


def test_every_required_suite_and_run_green_at_the_evidence_head_holds() -> None:
    g = gate_of(
        _evidence(
            TestRecord("CPU regressions", HEAD, 292, skipped=3), RunRecord("PipelineRL", HEAD, 0, 243.0)
        ),
        ("CPU regressions", "PipelineRL"),
    )
    assert (g.state, g.detail) == (
        "held",
        "at ffffffff: CPU regressions: 292 passed, 3 skipped; PipelineRL: exit 0 in 4m03s, typed",
    )


def test_red_missing_and_stale_records_each_fail_the_gate_by_name() -> None:
    g = gate_of(
        _evidence(
            TestRecord("CPU regressions", HEAD, 290, failed=2),
            RunRecord("PipelineRL", HEAD, 1),
            TestRecord("image checks", EARLIER, 175),
            TestRecord("nothing ran", HEAD, 0),
        ),
        ("CPU regressions", "PipelineRL", "image checks", "smoke", "nothing ran"),
    )
    assert g.state == "failed"
    # the first unmet one (a red suite) names its command; the others are counted
    assert g.command == "vimesync sop record tests --suite 'CPU regressions' --junit FILE (4 more unmet)"
    assert g.detail == (
        "at ffffffff: CPU regressions: 290 passed, 2 failed; PipelineRL: exit 1, typed;"
        " image checks recorded only at other heads, not ffffffff; smoke not recorded; nothing ran: 0 passed"
    )


def test_a_red_record_is_never_masked_by_a_green_one_of_the_same_name() -> None:
    """Issue 29 item 4: a suite and a run may share a name; a green run ``smoke`` beside a red
    suite ``smoke`` (or the other way round) fails the gate, and the detail names the red one."""
    red_suite = TestRecord("smoke", HEAD, 3, failed=1)
    green_run = RunRecord("smoke", HEAD, 0)
    for order in ((red_suite, green_run), (green_run, red_suite)):
        g = gate_of(_evidence(*order), ("smoke",))
        assert (g.state, g.detail) == (
            "failed",
            "at ffffffff: smoke: red suite 3 passed, 1 failed (not masked by the green run exit 0, typed)",
        )
        assert g.command == "vimesync sop record tests --suite smoke --junit FILE"
    g = gate_of(_evidence(TestRecord("smoke", HEAD, 5), RunRecord("smoke", HEAD, 3)), ("smoke",))
    assert (g.state, g.detail) == (
        "failed",
        "at ffffffff: smoke: red run exit 3, typed (not masked by the green suite 5 passed)",
    )
    assert g.command == "vimesync sop record run --name smoke -- CMD [ARG...]"
    # a suite in which nothing ran is not green either
    g = gate_of(_evidence(TestRecord("smoke", HEAD, 0, errors=1), RunRecord("smoke", HEAD, 0)), ("smoke",))
    assert g.state == "failed" and "red suite 0 passed, 1 error" in g.detail
    # every record of the name green: held, each named by its kind
    g = gate_of(_evidence(TestRecord("smoke", HEAD, 5), RunRecord("smoke", HEAD, 0)), ("smoke",))
    assert (g.state, g.detail) == ("held", "at ffffffff: smoke: suite 5 passed and run exit 0, typed")


def test_a_red_matrix_or_pre_commit_is_not_masked_either() -> None:
    """Every kind a name selects: a red matrix beside a green suite, a failed pre-commit beside
    a green suite called pre-commit, a red run beside a green matrix."""
    failed = (*HOOKS, HookResult("shouts", "shouts", "failed", exit=3))
    cases = [
        (
            (TestRecord("serving", HEAD, 9), RegressRecord("serving", HEAD, EARLIER, STILL_RED)),
            "serving: red matrix 1 failed before; 1 failed after (not masked by the green suite 9 passed)",
        ),
        (
            (PrecommitRecord(HEAD, 1, 150, failed), TestRecord("pre-commit", HEAD, 3)),
            "pre-commit: red Changed-file pre-commit fails (exit 1) (3 hooks, 1 skipped; 150 files);"
            " failed: shouts (not masked by the green suite 3 passed)",
        ),
        (
            (RegressRecord("serving", HEAD, EARLIER, FIXED), RunRecord("serving", HEAD, 1)),
            "serving: red run exit 1, typed (not masked by the green matrix",
        ),
    ]
    for records, needle in cases:
        g = gate_of(_more(*records), (needle.split(":")[0],))
        assert g.state == "failed" and needle in g.detail, g.detail


def _more(*records: object) -> Evidence:
    """Every kind a required name can select: suites, runs, matrices, pre-commit."""
    kinds = {k: tuple(r for r in records if isinstance(r, k)) for k in (TestRecord, RunRecord)}
    return Evidence(
        "a..b",
        HEAD,
        HEAD,
        Results(
            kinds[TestRecord],
            kinds[RunRecord],
            precommit=tuple(r for r in records if isinstance(r, PrecommitRecord)),
            regress=tuple(r for r in records if isinstance(r, RegressRecord)),
        ),
    )


FIXED = matrix({"t::a": "failed", "t::b": "passed"}, {"t::a": "passed", "t::b": "passed"})
STILL_RED = matrix({"t::a": "failed"}, {"t::a": "failed"})
HOOKS = (HookResult("ruff", "ruff", "passed"), HookResult("mypy", "mypy", "skipped"))


def test_a_matrix_and_pre_commit_can_be_required() -> None:
    g = gate_of(
        _more(
            RegressRecord("serving regressions", HEAD, EARLIER, FIXED),
            PrecommitRecord(HEAD, 0, 150, HOOKS),
        ),
        ("serving regressions", "pre-commit"),
    )
    assert (g.state, g.detail) == (
        "held",
        "at ffffffff: serving regressions: 1 failed, 1 passed before; 2 passed after;"
        " one passed before and after (does not prove the fix);"
        " pre-commit: Changed-file pre-commit passes (2 hooks, 1 skipped; 150 files)",
    )


def test_a_matrix_failing_after_or_a_failed_hook_fails_the_gate() -> None:
    failed = (*HOOKS, HookResult("shouts", "shouts", "failed", exit=3))
    g = gate_of(
        _more(
            RegressRecord("serving regressions", HEAD, EARLIER, STILL_RED),
            PrecommitRecord(HEAD, 1, 150, failed),
        ),
        ("serving regressions", "pre-commit"),
    )
    assert g.state == "failed"
    assert g.detail == (
        "at ffffffff: serving regressions: 1 failed before; 1 failed after;"
        " pre-commit: Changed-file pre-commit fails (exit 1) (3 hooks, 1 skipped; 150 files); failed: shouts"
    )


def test_a_matrix_or_pre_commit_at_another_head_is_not_evidence() -> None:
    g = gate_of(
        _more(
            RegressRecord("serving regressions", EARLIER, EARLIER, FIXED),
            PrecommitRecord(EARLIER, 0, 150, HOOKS),
        ),
        ("serving regressions", "pre-commit", "changed files"),
    )
    assert g.detail == (
        "at ffffffff: serving regressions recorded only at other heads, not ffffffff;"
        " pre-commit recorded only at other heads, not ffffffff;"
        " changed files recorded only at other heads, not ffffffff"
    )
    # a suite may be called pre-commit too: any record of the name green at the head holds
    assert gate_of(_more(TestRecord("pre-commit", HEAD, 3)), ("pre-commit",)).state == "held"


def test_the_next_command_is_the_one_for_what_is_missing_first() -> None:
    """pre-commit, a run, a matrix, a suite: each by the kind it was recorded as, here or at
    another head; a name never recorded is a suite (or one of the others), pre-commit itself."""
    red_run = RunRecord("PipelineRL four-GPU", HEAD, 1)
    cases = [
        ((), ("pre-commit",), "vimesync sop record precommit"),
        ((PrecommitRecord(EARLIER, 0, 150, HOOKS),), ("changed files",), "vimesync sop record precommit"),
        (
            (red_run,),
            ("PipelineRL four-GPU",),
            "vimesync sop record run --name 'PipelineRL four-GPU' -- CMD [ARG...]",
        ),
        ((RunRecord("lab", EARLIER, 0),), ("lab",), "vimesync sop record run --name lab -- CMD [ARG...]"),
        (
            (RegressRecord("serving regressions", HEAD, EARLIER, STILL_RED),),
            ("serving regressions",),
            "vimesync sop regress --name 'serving regressions' --test ...",
        ),
        (
            (TestRecord("smoke", EARLIER, 3),),
            ("smoke",),
            "vimesync sop record tests --suite smoke --junit FILE",
        ),
        (
            (),
            ("smoke (4 GPU)",),
            "vimesync sop record tests --suite 'smoke (4 GPU)' --junit FILE"
            " (or sop record run / sop regress --name 'smoke (4 GPU)')",
        ),
    ]
    for records, required, command in cases:
        g = gate_of(_more(*records), required)
        assert (g.state, g.command) == ("failed", command), required


def test_the_next_command_skips_what_holds_and_counts_the_rest() -> None:
    g = gate_of(
        _more(TestRecord("CPU regressions", HEAD, 292), RunRecord("lab", HEAD, 2)),
        ("CPU regressions", "pre-commit", "lab", "smoke"),
    )
    assert g.command == "vimesync sop record precommit (2 more unmet)"
    assert gate_of(_more(TestRecord("CPU regressions", HEAD, 292)), ("CPU regressions",)).command == ""
