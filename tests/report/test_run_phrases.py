"""How a run reads wherever it is shown (issue 31 item 2): typed ones say so, executed ones say
they were measured and where; a control run that did as expected reads "expected failure
reproduced"; a retried run names its earlier attempts; several independent runs of one name are
summed up; and the tests gate holds on executed records by what was expected of them."""

from __future__ import annotations

from vimesync.report.evidence import describe_record, independent_phrase, run_phrase
from vimesync.report.evidence import tests_gate as gate_of  # (not a test function)
from vimesync.report.evidencemd import render_evidence
from vimesync.sop.measured import Attempt, Expectation, Measured
from vimesync.sop.results import Evidence, Results, RunRecord, key_of

HEAD = "f" * 40


def _measured(**kw: object) -> Measured:
    return Measured(
        started_at="2026-12-07T00:00:00Z", host="h200-01", os="Linux", kernel="6.8.0", cpus=224, **kw
    )  # type: ignore[arg-type]


def test_a_typed_run_reads_typed_and_a_measured_one_names_its_host() -> None:
    typed = RunRecord("lab", HEAD, 0, 243.0, host="h200-01")
    ran = RunRecord("lab", HEAD, 0, 243.0, measured=_measured())
    assert describe_record(typed) == "exit 0 in 4m03s on h200-01, typed"
    assert describe_record(ran) == "exit 0 in 4m03s, measured on h200-01"
    lines = render_evidence(Evidence("a..b", HEAD, HEAD, Results(runs=(typed,))))
    assert "- lab: exit 0 in 4m03s on `h200-01`, typed." in lines
    lines = render_evidence(Evidence("a..b", HEAD, HEAD, Results(runs=(ran,))))
    assert "- lab: exit 0 in 4m03s, measured on `h200-01` (Linux 6.8.0, 224 CPUs)." in lines


def test_a_control_run_reads_expected_failure_reproduced_or_not_as_expected() -> None:
    control = _measured(expect=Expectation(1, "Too many open files", True))
    rec = RunRecord("FD control", HEAD, 1, 12.0, measured=control)
    assert rec.ok and run_phrase(rec) == "exit 1 in 12s, expected failure reproduced"
    missed = RunRecord("FD control", HEAD, 0, 12.0, measured=_measured(expect=Expectation(1, "x", False)))
    assert not missed.ok
    assert (
        run_phrase(missed)
        == "exit 0 in 12s, not as expected (expected exit 1, the expected output not found)"
    )
    g = gate_of(Evidence("a..b", HEAD, HEAD, Results(runs=(rec,))), ("FD control",))
    assert g.state == "held" and "expected failure reproduced, measured" in g.detail
    g = gate_of(Evidence("a..b", HEAD, HEAD, Results(runs=(missed,))), ("FD control",))
    assert g.state == "failed"


def test_a_retried_run_names_its_earlier_attempts() -> None:
    rec = RunRecord("GPU", HEAD, 0, 243.0, measured=_measured(attempts=(Attempt(-9, 30.0),)))
    assert run_phrase(rec) == "exit 0 in 4m03s, passed on an unchanged retry (attempt 1: exit -9 (SIGKILL))"
    red = RunRecord("GPU", HEAD, 1, 5.0, measured=_measured(attempts=(Attempt(1, 5.0), Attempt(-1, 5.0))))
    assert run_phrase(red) == "exit 1 in 5s, 3 attempts (attempt 1: exit 1; attempt 2: exit -1 (SIGHUP))"


def test_independent_runs_of_one_name_are_summed_up() -> None:
    runs = (
        RunRecord("PipelineRL", HEAD, 0, 243.0, measured=_measured()),
        RunRecord("PipelineRL", HEAD, 0, 250.0, measured=_measured(), run=2),
    )
    assert (
        independent_phrase(list(runs))
        == "two independent complete runs, both exit 0, 4m03s and 4m10s (measured)"
    )
    lines = render_evidence(Evidence("a..b", HEAD, HEAD, Results(runs=runs)))
    i = lines.index("- PipelineRL: two independent complete runs, both exit 0, 4m03s and 4m10s (measured).")
    assert lines[i + 1].startswith("  - run 1: exit 0 in 4m03s, measured on")
    assert lines[i + 2].startswith("  - run 2: exit 0 in 4m10s, measured on")
    # the records line names each name once, whoever committed its runs
    who = {key_of(r): "Maint <m@x>" for r in runs}
    evidence = Evidence("a..b", HEAD, HEAD, Results(runs=runs)).with_committers(who)
    (claim,) = [ln for ln in render_evidence(evidence) if "committed by" in ln]
    assert ": PipelineRL committed by Maint" in claim and "PipelineRL, PipelineRL" not in claim
    mixed = (runs[0], RunRecord("PipelineRL", HEAD, 1, 9.0, run=2))
    assert independent_phrase(list(mixed)) == "two independent runs, exits 0, 1, 4m03s and 9s (1 typed)"
