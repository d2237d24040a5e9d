"""CI jobs counted by step (issue 31 item 3): Buildkite jobs by their group or step key, GitHub
check runs by workflow, ``[[ci.groups]]`` patterns in the config, a required group not all green
failing the ci gate; against the loopback Buildkite and GitHub servers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.buildkite import TOKEN, FakeBuildkite, grouped_build, job, serve
from tests.builders.fakegithub import TOKEN as GH_TOKEN
from tests.builders.fakegithub import FakeGitHub
from tests.builders.fakegithub import serve as serve_github
from tests.builders.headchange import committed_change
from tests.builders.toml import tomllib
from vimesync.buildkite import Build, BuildkiteJob, _job
from vimesync.cli.app import main
from vimesync.config.cigroups import GroupRule, ci_groups
from vimesync.demo.build import Demo, build_demo
from vimesync.errors import ConfigError
from vimesync.github import CheckRun
from vimesync.report.evidence import with_ci_records
from vimesync.report.evidencemd import escape
from vimesync.sop.cigroups import MAX_RECORDED, OTHER
from vimesync.sop.cirecords import ci_phrase, summarise_buildkite, summarise_checks
from vimesync.sop.gates import gate
from vimesync.sop.results import Evidence, Results

SHA = "f" * 40
CPU = GroupRule("CPU checks", ("cpu",))
GPU = GroupRule("GPU jobs", ("gpu",), required=True)


def _build(data: dict[str, Any]) -> Build:
    jobs = tuple(_job(j) for j in data["jobs"])
    return Build(data["number"], data["state"], data["commit"], data["web_url"], jobs)


def test_buildkite_jobs_are_counted_by_group_key_and_said_so() -> None:
    rec = summarise_buildkite(_build(grouped_build(1445, SHA)), SHA)
    assert [(g.name, g.passed, g.total, g.agent_lost) for g in rec.groups] == [
        ("cpu", 9, 9, 0),
        ("gpu", 40, 40, 1),
    ]
    rec = summarise_buildkite(_build(grouped_build(1445, SHA)), SHA, rules=(CPU, GPU))
    assert ci_phrase(rec, str) == (
        "#1445 passed 49 jobs (CPU checks 9/9; GPU jobs 40/40);"
        " one agent-lost job passed on an unchanged retry"
    )
    assert ci_phrase(rec) == "#1445 passed 49 jobs; one agent-lost job passed on an unchanged retry"


def test_a_step_key_stands_in_for_an_absent_group_key_and_no_key_means_no_groups() -> None:
    """Older answers carry no ``group_key``: the step key groups; jobs naming neither (numbered
    shards) are counted as a whole, with no groups."""
    keyed = Build(1, "passed", SHA, "", (BuildkiteJob("a", "script", "x", "passed", 0, step_key="lint"),))
    assert [g.name for g in summarise_buildkite(keyed, SHA).groups] == ["lint"]
    plain = Build(1, "passed", SHA, "", (BuildkiteJob("a", "script", "x", "passed", 0),))
    assert summarise_buildkite(plain, SHA).groups == ()
    odd = _job({"id": "a", "step_key": 7, "group_key": ["x"], "state": "passed"})  # odd shapes: dropped
    assert (odd.step_key, odd.group_key) == ("", "")


def test_a_required_group_not_all_green_fails_the_ci_gate() -> None:
    green = gate("ci", "held", f"green at {SHA[:8]}")

    def judged(*rules: GroupRule, jobs: list[dict[str, Any]] | None = None, state: str = "passed") -> Any:
        data = {**grouped_build(1445, SHA), "state": state}
        if jobs is not None:
            data["jobs"] = jobs
        rec = summarise_buildkite(_build(data), SHA, rules=rules)
        return rec, with_ci_records(green, Evidence("s", SHA, SHA, Results(ci=(rec,))))

    rec, g = judged(CPU, GPU)
    assert rec.ok and g == green
    # the GPU step never ran: the build passed, the required group is empty
    rec, g = judged(CPU, GPU, jobs=[job("c", id="c", group_key="cpu")])
    assert not rec.ok and g.state == "failed"
    assert g.detail.endswith("; required group not all green: GPU jobs 0/0 (required: no job ran)")
    # still running in the required group: pending
    running = [job("c", id="c", group_key="cpu"), job("g", "running", None, id="g", group_key="gpu")]
    rec, g = judged(CPU, GPU, jobs=running, state="running")
    assert g.state == "pending"
    # an empty group that is not required says nothing
    rec, g = judged(CPU, GroupRule("docs", ("docs",)))
    assert rec.ok and g == green


def test_github_check_runs_are_grouped_by_workflow() -> None:
    runs = [
        CheckRun("lint", "GitHub Actions", "completed", "success", suite=1, workflow="CPU checks"),
        CheckRun("unit", "GitHub Actions", "completed", "success", suite=1, workflow="CPU checks"),
        CheckRun("e2e", "GitHub Actions", "completed", "failure", suite=2, workflow="GPU"),
        CheckRun("codecov", "Codecov", "completed", "success"),
    ]
    rec = summarise_checks(runs, SHA)
    assert [(g.name, g.passed, g.total) for g in rec.groups] == [
        ("CPU checks", 2, 2),
        ("GPU", 0, 1),
        ("Codecov", 1, 1),
    ]
    ruled = summarise_checks(runs, SHA, rules=(GroupRule("e2e", ("GPU / e2e",), required=True),))
    assert [(g.name, g.unmet) for g in ruled.groups][0] == ("e2e", True)


def test_hostile_step_keys_are_one_line_bounded_and_escaped_in_markdown() -> None:
    jobs = [job(f"j{i}", id=f"j{i}", step_key=f"step-{i}") for i in range(10_000)]
    jobs.append(job("x", id="evil", group_key="[click](https://evil.example) @team\n# h1 " + "x" * 5000))
    data = {"number": 1, "state": "passed", "commit": SHA, "web_url": "", "jobs": jobs}
    rec = summarise_buildkite(_build(data), SHA)
    assert len(rec.groups) == MAX_RECORDED and rec.groups[-1].name == OTHER
    assert rec.groups[-1].total == 10_001 - (MAX_RECORDED - 1) and rec.passed == 10_001
    evil = summarise_buildkite(_build({**data, "jobs": jobs[-1:]}), SHA).groups[0].name
    assert "\n" not in evil and len(evil) <= 80
    line = ci_phrase(summarise_buildkite(_build({**data, "jobs": jobs[-1:]}), SHA), escape)
    assert "\\[click\\]" in line and "[click](" not in line and "\n" not in line


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"groups": {"name": "x"}}, "must be an array of tables"),
        ({"groups": [{"name": "x", "match": ["("]}]}, "not an RE2 pattern"),
        ({"groups": [{"name": "x", "match": ["(?=x)"]}]}, "not an RE2 pattern"),  # no lookaround in RE2
        ({"groups": [{"name": "x", "match": ["((a{100}){100}){100}"]}]}, "not an RE2 pattern"),  # too big
        ({"groups": [{"name": "x", "match": ["a" * 201]}]}, "each pattern is one line of 1-200"),
        ({"groups": [{"name": "x", "match": ["a\nb"]}]}, "each pattern is one line"),
        ({"groups": [{"name": "x", "match": ["a"] * 51}]}, "a list of 1-50 patterns"),
        ({"groups": [{"name": "x", "match": []}]}, "a list of 1-50 patterns"),
        ({"groups": [{"name": "x", "match": "cpu"}]}, "a list of 1-50 patterns"),
        ({"groups": [{"name": f"g{i}", "match": ["a"]} for i in range(51)]}, "at most 50 groups"),
        ({"groups": [{"name": "x", "match": ["a"]}] * 2}, "a second group named"),
        ({"groups": [{"name": "x\n# h", "match": ["a"]}]}, "name must be one line"),
        ({"groups": [{"name": "", "match": ["a"]}]}, "name must be one line"),
        ({"groups": [{"name": "x", "match": ["a"], "required": "yes"}]}, "required must be true or false"),
        ({"groups": [{"name": "x", "match": ["a"], "command": "rm -rf /"}]}, "unknown key 'command'"),
    ],
)
def test_bad_groups_are_config_errors_naming_the_group(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        ci_groups(Path("vimesync.toml"), raw["groups"])
    assert message in str(exc.value)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


GROUPS = """
[[ci.groups]]
name = "CPU checks"
match = ["cpu", "lint"]

[[ci.groups]]
name = "GPU jobs"
match = ["gpu.*"]
required = true
"""


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    monkeypatch.chdir(built.downstream)
    cfg = (built.downstream / "vimesync.toml").read_text()
    extra = '\n[ci]\nbuildkite = "vime/vime"\nrepo = "vime-org/vime"\n' + GROUPS
    with committed_change(built, "vimesync.toml", cfg + extra) as configured:
        yield configured
    shutil.rmtree(built.downstream / "sop/records", ignore_errors=True)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.mark.slow
def test_a_grouped_build_is_recorded_by_group_and_reported(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBuildkite()
    fake.builds = [grouped_build(1445, demo.head)]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        code, out, err = run(["sop", "record", "ci"], capsys)
    assert code == 0, err
    assert "passed 49 jobs (CPU checks 9/9; GPU jobs 40/40); one agent-lost job" in out
    (file,) = (demo.downstream / "sop/records").iterdir()
    groups = tomllib.loads(file.read_text())["ci"]["1445"][demo.head]["groups"]
    assert groups == {
        "CPU checks": {"passed": 9},
        "GPU jobs": {"passed": 40, "agent_lost": 1, "required": True},
    }
    code, md, _ = run(
        ["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests"], capsys
    )
    assert (
        "- Buildkite [#1445](https://buildkite.com/vime/vime/builds/1445) passed 49 jobs"
        " (CPU checks 9/9; GPU jobs 40/40); one agent-lost job passed on an unchanged retry." in md
    )
    # a hand-edited record whose groups are hostile is refused, naming the file
    file.write_text(file.read_text().replace('[ci."1445"', '[ci."1445"', 1) + "\n")
    text = file.read_text().replace('"GPU jobs"', '"GPU\\u0007jobs"')
    file.write_text(text)
    code, _, err = run(
        ["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests"], capsys
    )
    assert code == 2 and file.name in err and "Traceback" not in err


@pytest.mark.slow
def test_a_required_group_with_no_job_fails_the_ci_gate_end_to_end(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBuildkite()
    data = grouped_build(1446, demo.head)
    data["jobs"] = [j for j in data["jobs"] if j.get("group_key") != "gpu"]
    fake.builds = [data]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        code, out, err = run(["sop", "record", "ci", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["record"]["ok"] is False
    code, out, _ = run(["report", "--baseline", demo.baseline, "--skip-gate", "tests", "--json"], capsys)
    (ci,) = [g for g in json.loads(out)["gates"] if g["name"] == "ci"]
    assert code == 1 and ci["state"] == "failed"
    assert "required group not all green: GPU jobs 0/0 (required: no job ran)" in ci["detail"]


@pytest.mark.slow
@pytest.mark.parametrize("actions", ["served", "missing"])
def test_github_check_runs_are_recorded_by_workflow(
    demo: Demo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    actions: str,
) -> None:
    fake = FakeGitHub(range(0))

    def run_of(name: str, suite: int) -> dict[str, Any]:
        app = {"name": "GitHub Actions"}
        return {
            "name": name,
            "status": "completed",
            "conclusion": "success",
            "app": app,
            "check_suite": {"id": suite},
        }

    fake.check_runs[demo.head] = [run_of("lint", 11), run_of("unit", 11), run_of("e2e", 12)]
    odd: list[Any] = [{"check_suite_id": True, "name": "bool"}, "text", {"check_suite_id": 12, "name": 5}]
    fake.workflow_runs = {
        demo.head: [
            *odd,
            {"check_suite_id": 11, "name": "CPU", "head_sha": demo.head},
            {"check_suite_id": 12, "name": "gpu e2e", "head_sha": demo.head},
        ]
    }
    if actions == "missing":
        fake.workflow_runs = None
    with serve_github(fake) as url:
        monkeypatch.delenv("BUILDKITE_API_TOKEN", raising=False)
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        code, out, err = run(["sop", "record", "ci", "--json"], capsys)
    if actions == "served":
        # a list holding a string is not GitHub: the runs' workflows are unknown, said so
        assert code == 0, err
        doc = json.loads(out)
        assert doc["notes"] == ["the workflow runs could not be read: check runs are grouped by their app"]
        fake.workflow_runs[demo.head] = fake.workflow_runs[demo.head][:1] + fake.workflow_runs[demo.head][2:]
        with serve_github(fake) as url:
            monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
            code, out, err = run(["sop", "record", "ci", "--replace", "--json"], capsys)
        assert code == 0, err
        groups = [(g["name"], g["passed"], g["required"]) for g in json.loads(out)["record"]["groups"]]
        assert groups == [("CPU checks", 1, False), ("GPU jobs", 1, True), ("CPU", 1, False)]
    else:
        assert code == 0, err
        doc = json.loads(out)
        assert doc["notes"] == ["the workflow runs could not be read: check runs are grouped by their app"]
        groups = [(g["name"], g["passed"]) for g in doc["record"]["groups"]]
        assert groups == [("CPU checks", 1), ("GPU jobs", 0), ("GitHub Actions", 2)]
        assert doc["record"]["ok"] is False  # the required GPU jobs group ran nothing


def test_the_most_groups_a_record_may_hold_are_written_and_read_back(tmp_path: Path) -> None:
    """50 configured groups (the most [[ci.groups]] may name) and 100 steps of their own: the
    record holds at most MAX_RECORDED groups, and the file it is written to reads back."""
    from vimesync.sop.cirecords import ci_values
    from vimesync.sop.results import load_results, write_table

    rules = tuple(GroupRule(f"g{i}", (f"k{i}",), required=i == 0) for i in range(50))
    jobs = [job(f"j{i}", id=f"j{i}", step_key=f"k{i}") for i in range(150)]
    data = {"number": 3, "state": "passed", "commit": SHA, "web_url": "", "jobs": jobs}
    rec = summarise_buildkite(_build(data), SHA, rules=rules)
    assert len(rec.groups) == MAX_RECORDED and rec.groups[-1].name == OTHER and rec.ok
    (tmp_path / "sop").mkdir()
    write_table(tmp_path, "s", "ci", rec.build, rec.sha, ci_values(rec))
    (back,) = load_results(tmp_path, "s").ci
    assert back.groups == rec.groups
