"""``vimesync sop record ci``: the jobs of the head's Buildkite build (a loopback Buildkite) or
its GitHub check runs, counted by their last attempt, an agent lost told apart from a failed
test, recorded for the evidence head and shown in the report in the seed's voice."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.buildkite import TOKEN, FakeBuildkite, agent_lost_build, job, serve
from tests.builders.headchange import committed_change
from tests.builders.toml import tomllib
from vimesync.buildkite import Build, BuildkiteJob
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo
from vimesync.github import CheckRun
from vimesync.sop.cirecords import CiRecord, ci_phrase, summarise_buildkite, summarise_checks

SHA = "f" * 40


def _build(*jobs: dict, state: str = "passed") -> Build:
    return Build(
        number=7,
        state=state,
        commit=SHA,
        url="",
        jobs=tuple(
            BuildkiteJob(
                id=j["id"],
                type=j["type"],
                name=j["name"],
                state=j["state"],
                exit_status=j["exit_status"],
                retried=j["retried"],
                retried_in_job_id=j["retried_in_job_id"] or "",
                retries_count=j["retries_count"],
            )
            for j in jobs
        ),
    )


def test_an_agent_lost_job_passing_on_its_retry_is_a_pass_said_so() -> None:
    b = agent_lost_build(1445, SHA)
    rec = summarise_buildkite(_build(*[j for j in b["jobs"] if j["type"] == "script"]), SHA)
    assert (rec.passed, rec.failed, rec.agent_lost, rec.retried_failures, rec.ok) == (49, 0, 1, 0, True)
    assert ci_phrase(rec).replace("#7", "#1445") == (
        "#1445 passed 49 jobs; one agent-lost job passed on an unchanged retry"
    )


def test_a_test_failure_retried_green_is_called_flaky_and_a_lost_job_left_red_fails() -> None:
    rec = summarise_buildkite(
        _build(
            job("unit", "failed", 1, id="u1", retried=True, retried_in_job_id="u2"),
            job("unit", id="u2"),
            job("gpu \x1b[2J\u202e", "failed", -1, id="g"),
            job("lint", "running", None, id="l"),
            job("docs", "skipped", None, id="d"),
            state="failed",
        ),
        SHA,
    )
    assert (rec.passed, rec.failed, rec.pending, rec.retried_failures, rec.ok) == (1, 1, 1, 1, False)
    assert rec.failing == ("gpu ?[2J? (agent lost)",)
    assert ci_phrase(rec) == (
        "#7: build failed; 3 jobs, 1 passed, 1 failed, 1 pending;"
        " one job failed a test, then passed on a retry (flaky)"
    )


def test_a_failed_build_whose_script_jobs_all_passed_is_failed() -> None:
    """A trigger step that failed makes the build "failed" though every script job passed: the
    build's own state decides, and the trigger step is named."""
    trigger = job("deploy docs", "failed", None, id="t", type="trigger")
    rec = summarise_buildkite(_build(job("unit", id="u"), job("lint", id="l"), trigger, state="failed"), SHA)
    assert (rec.passed, rec.failed, rec.pending, rec.state, rec.ok) == (2, 0, 0, "failed", False)
    assert rec.failing == ("deploy docs (trigger step)",)
    assert ci_phrase(rec) == "#7: build failed; 2 jobs, 2 passed"


@pytest.mark.parametrize("state", ["canceled", "canceling", "running", "scheduled", "blocked", "failing", ""])
def test_a_build_not_passed_as_a_whole_is_no_pass(state: str) -> None:
    rec = summarise_buildkite(_build(job("unit", id="u"), state=state), SHA)
    assert rec.passed == 1 and not rec.ok
    assert (
        ci_phrase(rec) == f"#7: {'build ' + state if state else 'build state not recorded'}; 1 job, 1 passed"
    )
    assert summarise_buildkite(_build(job("unit", id="u"), state="passed"), SHA).ok


def test_a_red_snapshot_at_the_evidence_head_fails_the_ci_gate_and_a_running_one_keeps_it_pending() -> None:
    from vimesync.report.evidence import with_ci_records
    from vimesync.sop.gates import gate
    from vimesync.sop.results import Evidence, Results

    def evidence(*recs: CiRecord) -> Evidence:
        return Evidence("s", SHA, SHA, Results(ci=recs))

    green = gate("ci", "held", f"green at {SHA[:8]}")
    red = summarise_buildkite(_build(job("unit", id="u"), state="failed"), SHA)
    running = summarise_buildkite(_build(job("unit", "running", None, id="u"), state="running"), SHA)
    ok = summarise_buildkite(_build(job("unit", id="u")), SHA)
    elsewhere = summarise_buildkite(_build(job("unit", id="u"), state="failed"), "e" * 40)
    assert with_ci_records(green, evidence(ok, elsewhere)) == green  # green, and red at another head
    failed = with_ci_records(green, evidence(ok, red))
    assert (failed.state, failed.detail) == (
        "failed",
        "green at ffffffff; recorded at ffffffff: #7: build failed; 1 job, 1 passed",
    )
    pending = with_ci_records(green, evidence(running))
    assert (pending.state, pending.ok) == ("pending", False)
    assert with_ci_records(gate("ci", "not checked", "no token"), evidence(red)).state == "failed"
    assert with_ci_records(gate("ci", "not checked", "no token"), evidence(ok)).state == "not checked"
    assert with_ci_records(gate("ci", "off", "skipped"), evidence(red)).state == "off"
    empty = summarise_checks([], SHA)  # nothing ran, nothing failed: no evidence either way
    assert with_ci_records(gate("ci", "not checked", "no token"), evidence(empty)).state == "not checked"


def test_github_check_runs_count_success_and_failures_only() -> None:
    runs = [
        CheckRun("lint", "GitHub Actions", "completed", "success"),
        CheckRun("skip", "GitHub Actions", "completed", "skipped"),
        CheckRun("gpu", "GitHub Actions", "completed", "timed_out"),
        CheckRun("docs", "GitHub Actions", "in_progress", None),
    ]
    rec = summarise_checks(runs, SHA)
    assert (rec.passed, rec.failed, rec.pending, rec.failing) == (1, 1, 1, ("gpu",))
    assert ci_phrase(rec) == "GitHub check runs: 3 check runs, 1 passed, 1 failed, 1 pending"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    """The demo with its [ci] pipeline committed (a record is refused while vimesync.toml
    differs from HEAD): its head is that commit."""
    monkeypatch.chdir(built.downstream)
    cfg = (built.downstream / "vimesync.toml").read_text()
    with committed_change(built, "vimesync.toml", cfg + '\n[ci]\nbuildkite = "vime/vime"\n') as configured:
        yield configured
    shutil.rmtree(built.downstream / "sop/records", ignore_errors=True)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.mark.slow
def test_the_head_build_is_recorded_and_reported(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBuildkite()
    fake.builds = [agent_lost_build(1445, demo.head), agent_lost_build(1429, "e" * 40, passing=49)]
    fake.builds[0]["jobs"][0]["name"] = "CPU `shard` |0| <b>"
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        code, out, err = run(["sop", "record", "ci"], capsys)
        assert code == 0, err
        assert "recorded #1445: passed 49 jobs; one agent-lost job passed on an unchanged retry" in out
        assert TOKEN not in out + err
        code, out, _ = run(["sop", "record", "ci", "--build", "1", "--json"], capsys)
        assert code == 2 and json.loads(out)["kind"] == "error"
    (file,) = (demo.downstream / "sop/records").iterdir()
    rec = tomllib.loads(file.read_text())["ci"]["1445"][demo.head]
    assert (rec["source"], rec["passed"], rec["failed"], rec["agent_lost"]) == ("buildkite", 49, 0, 1)
    code, md, _ = run(
        ["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests"], capsys
    )
    assert (
        "- Buildkite [#1445](https://buildkite.com/vime/vime/builds/1445) passed 49 jobs;"
        " one agent-lost job passed on an unchanged retry." in md
    )
    code, out, _ = run(
        ["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests", "--json"], capsys
    )
    (ci,) = [r for r in json.loads(out)["evidence"]["recorded"] if r["kind"] == "ci"]  # the JSON carries it
    assert (ci["build"], ci["passed"], ci["agent_lost"], ci["ok"]) == ("1445", 49, 1, True)


@pytest.mark.slow
def test_an_untrusted_checkout_cannot_choose_the_pipeline(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In CI the checkout's [ci] buildkite could name a pipeline holding green builds of this
    commit: refused; the job's --pipeline is read (the API root and token only from the env)."""
    fake = FakeBuildkite()
    fake.builds = [agent_lost_build(1445, demo.head)]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        monkeypatch.setenv("CI", "true")
        # The config's [upstream] path lies outside the checkout, which CI refuses, but a
        # record named by --sync never reads the upstream: not refused for it.
        assert 'path = "../slime"' in (demo.downstream / "vimesync.toml").read_text()
        code, _, err = run(["sop", "record", "ci", "--sync", "s"], capsys)
        assert code == 2 and "[ci] buildkite of the checkout is not honoured in an untrusted checkout" in err
        assert fake.requests == [] and not (demo.downstream / "sop/records").exists()
        code, out, err = run(
            ["sop", "record", "ci", "--sync", "s", "--pipeline", "vime/vime", "--json"], capsys
        )
        assert code == 0, err
        assert json.loads(out)["record"]["build"] == "1445" and fake.requests[0][2] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("key", ["api", "buildkite_api", "token", "buildkite_token"])
def test_a_checkout_cannot_name_the_api_root_or_the_token(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
    monkeypatch.setenv("VIMESYNC_BUILDKITE_API", "http://127.0.0.1:9")  # nothing listens: never reached
    cfg = demo.downstream / "vimesync.toml"
    cfg.write_text(
        cfg.read_text().replace('buildkite = "vime/vime"', f'buildkite = "vime/vime"\n{key} = "http://x"')
    )
    code, _, err = run(["sop", "record", "ci"], capsys)
    assert code == 2 and f"unknown key '{key}' in [ci]" in err and TOKEN not in err


def test_a_failed_build_is_recorded_failed_and_a_nested_answer_is_a_clear_error(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeBuildkite()
    build = agent_lost_build(1454, demo.head)
    build["state"] = "failed"  # its trigger step failed; every script job passed
    build["jobs"].append({"id": "t", "type": "trigger", "name": "publish", "state": "failed"})
    fake.builds = [build]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        code, out, err = run(["sop", "record", "ci", "--json"], capsys)
        assert code == 0, err
        rec = json.loads(out)["record"]
        assert (rec["state"], rec["passed"], rec["failed"], rec["ok"]) == ("failed", 49, 0, False)
        assert rec["failing"] == ["publish (trigger step)"]
        code, out, _ = run(["report", "--baseline", demo.baseline, "--skip-gate", "tests", "--json"], capsys)
        (ci,) = [g for g in json.loads(out)["gates"] if g["name"] == "ci"]
        assert (
            code == 1 and ci["state"] == "failed"
        )  # a red snapshot at the evidence head: never beside green
        assert ci["detail"].endswith(
            f"; recorded at {demo.head[:8]}: #1454: build failed; 49 jobs, 49 passed;"
            " one agent-lost job passed on an unchanged retry"
        )
        fake.raw = (200, {}, b'[{"number": 1, "jobs": [], "state": ' + b"[" * 900 + b"]" * 900 + b"}]")
        code, _, err = run(["sop", "record", "ci"], capsys)
        assert code == 2 and "nested too deeply" in err and "Traceback" not in err


@pytest.fixture
def topped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Demo, str, str]:
    """A demo whose [ci] config is committed (the evidence head), with a records-only commit on
    top (the head): (demo, evidence head, head)."""
    from tests.builders.gitrepo import commit_env
    from vimesync import git

    d = build_demo(tmp_path / "d")
    monkeypatch.chdir(d.downstream)
    cfg = d.downstream / "vimesync.toml"
    cfg.write_text(cfg.read_text() + '\n[ci]\nbuildkite = "vime/vime"\n')
    records = d.downstream / "sop/records"
    records.mkdir(parents=True)
    env = commit_env()
    git.run(d.downstream, ["commit", "-qam", "ci: the Buildkite pipeline"], env=env)
    bound = git.run(d.downstream, ["rev-parse", "HEAD"]).decode().strip()
    name = next(iter(_sync_names(d)))
    (records / f"{name}.toml").write_text(f"# Evidence of sync {name}\n")
    git.run(d.downstream, ["add", "sop/records"], env=env)
    git.run(d.downstream, ["commit", "-qm", "sop: records"], env=env)
    head = git.run(d.downstream, ["rev-parse", "HEAD"]).decode().strip()
    return d, bound, head


def _sync_names(d: Demo) -> list[str]:
    return [f"{d.base[:8]}..{d.tip[:8]}"]


def test_the_build_of_a_records_only_commit_on_the_evidence_head_is_recorded(
    topped: tuple[Demo, str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ci gate judges the final head, a records-only commit: its build is recorded for the
    evidence head, found by default or by --build; a build of other code never is."""
    d, bound, head = topped
    fake = FakeBuildkite()
    fake.builds = [
        agent_lost_build(1454, head),
        agent_lost_build(1445, bound),
        agent_lost_build(1429, d.head),  # the code before the config commit: another evidence head
        agent_lost_build(1400, "e" * 40),  # a commit this repository does not hold
    ]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_BUILDKITE_API", url)
        monkeypatch.setenv("BUILDKITE_API_TOKEN", TOKEN)
        code, out, err = run(["sop", "record", "ci", "--json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert (doc["record"]["build"], doc["evidence_head"], doc["head"]) == ("1454", bound, head)
        assert doc["notes"] == [
            f"build #1454 ran on {head[:12]}, which adds only bookkeeping to the evidence head"
            f" {bound[:12]}: recorded for {bound[:12]}"
        ]
        # the same build again: refused without --replace (issue 29 item 7), named with its values
        code, _, err = run(["sop", "record", "ci", "--build", "1454"], capsys)
        assert code == 2 and " ".join(err.split()) == (
            f"error: CI snapshot of build #1454 is already recorded at {bound[:8]} (passed 49 jobs;"
            f" one agent-lost job passed on an unchanged retry, recorded {doc['record']['recorded_at']}):"
            " pass --replace to replace it"
        )
        for number, replaced in ((1454, "#1454"), (1445, None)):
            argv = ["sop", "record", "ci", "--build", str(number), "--replace", "--json"]
            code, out, err = run(argv, capsys)
            again = json.loads(out)
            assert code == 0 and again["record"]["build"] == str(number), err
            assert (again["replaced"] or {}).get("name") == replaced
        code, _, err = run(["sop", "record", "ci", "--build", "1429"], capsys)
        assert code == 2
        assert (
            f"build #1429 ran on {d.head[:12]}, whose evidence head is {d.head[:12]}, not {bound[:12]}" in err
        )
        code, _, err = run(["sop", "record", "ci", "--build", "1400"], capsys)
        assert code == 2 and "ran on eeeeeeeeeeee, a commit this repository does not hold" in err
        code, _, err = run(["sop", "record", "ci", "--build", "1"], capsys)
        assert code == 2 and "vime/vime: there is no build #1" in err and " of commit " not in err
        fake.builds = [agent_lost_build(1429, d.head)]
        code, _, err = run(["sop", "record", "ci"], capsys)
        assert code == 2
        assert (
            f"no build of the head {head[:12]} nor of the commits down to its evidence head {bound[:12]}"
            in err
        )
        assert TOKEN not in err
    table = tomllib.loads((d.downstream / f"sop/records/{_sync_names(d)[0]}.toml").read_text())["ci"]
    assert sorted(table) == ["1445", "1454"] and list(table["1454"]) == [bound]
