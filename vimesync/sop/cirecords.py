"""A snapshot of the CI jobs behind a head, recorded by ``vimesync sop record ci`` in
``sop/records/<sync>.toml`` beside the suites and runs (:mod:`vimesync.sop.results`)::

    [ci."1445".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    source = "buildkite"           # or "github" (the head's check runs)
    state = "passed"               # the build's state: only "passed" is a pass
    passed = 49                    # jobs whose last attempt passed
    failed = 0                     # last attempts failed, timed out or canceled
    pending = 0                    # last attempts not finished
    agent_lost = 1                 # lost with their agent (exit -1), then passed on a retry
    retried_failures = 0           # failed a test (exit > 0), then passed on a retry: flaky
    failing = []                   # the first failing jobs' names
    url = "https://buildkite.com/vime/vime/builds/1445"

A retry in Buildkite runs the same job again (the same step, command and commit), so a job lost
with its agent that passes on its retry passed unchanged; one that failed a test and passed on a
retry is called out, never counted as a clean pass. A Buildkite build passes only when its own
state is ``passed``: one whose trigger step failed is ``failed`` though every script job passed
(the failed trigger step is named with the failing jobs), and ``canceled``, ``running`` or
``scheduled`` is no pass either. Pure: data in, data out."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vimesync.config.cigroups import GroupRule
from vimesync.sop.cigroups import CONTROL, CiGroup, Outcome, groups_phrase, job_name, tally
from vimesync.text import plural

BUILD = re.compile(r"[0-9]{1,9}|github")
MAX_FAILING = 20
_FAILED = frozenset({"failed", "canceled", "canceling", "timed_out", "timing_out", "expired"})
_NOT_RUN = frozenset({"skipped", "broken", "not_run"})  # conditions not met: nothing ran
PASSED = "passed"  # the one build state that is a pass (Buildkite: failed, canceled, running, ...)


@dataclass(frozen=True)
class CiRecord:
    build: str  # the Buildkite build number, or "github" (the head's check runs)
    sha: str  # the evidence head the jobs ran at
    source: str  # buildkite | github
    state: str = ""
    passed: int = 0
    failed: int = 0
    pending: int = 0
    agent_lost: int = 0
    retried_failures: int = 0
    failing: tuple[str, ...] = ()
    url: str = ""
    recorded_at: str = ""
    groups: tuple[CiGroup, ...] = ()  # the jobs by step (sop/cigroups.py)

    @property
    def name(self) -> str:
        return f"#{self.build}" if self.build.isdigit() else "GitHub check runs"

    @property
    def build_failed(self) -> bool:
        """A Buildkite build whose own state is not ``passed``: failed (a trigger step, a
        pipeline upload), canceled, still running or scheduled, whatever its script jobs did."""
        return self.source == "buildkite" and self.state != PASSED

    @property
    def ok(self) -> bool:
        """Every last attempt finished and passed, something ran, and a Buildkite build passed
        as a whole."""
        ok = self.passed > 0 and self.failed == 0 and self.pending == 0 and not self.build_failed
        return ok and not self.unmet_groups

    @property
    def unmet_groups(self) -> tuple[CiGroup, ...]:
        """Required groups ([[ci.groups]] required) not all green."""
        return tuple(g for g in self.groups if g.unmet)


def summarise_buildkite(
    build: Any, sha: str, recorded_at: str = "", rules: Sequence[GroupRule] = ()
) -> CiRecord:
    """A :class:`vimesync.buildkite.Build`'s script jobs, each counted once by its last attempt,
    and by its group (``rules``, else its step's group or key: :mod:`vimesync.sop.cigroups`)."""
    jobs = [j for j in build.jobs if j.type in ("script", "")]
    previous: dict[str, list[Any]] = {}
    for j in jobs:
        if j.retried and j.retried_in_job_id:
            previous.setdefault(j.retried_in_job_id, []).append(j)
    failing: list[str] = []
    for j in build.jobs:  # a trigger step that failed fails the build: named with the failing
        if j.type == "trigger" and not j.retried and j.state in _FAILED and len(failing) < MAX_FAILING:
            failing.append(job_name(j.name) + " (trigger step)")
    outcomes: list[tuple[tuple[str, ...], str, Outcome]] = []
    for j in (j for j in jobs if not j.retried):
        outcome = _outcome(j, _attempts_before(j, previous))
        if outcome == "failed" and len(failing) < MAX_FAILING:
            failing.append(job_name(j.name) + (" (agent lost)" if j.exit_status == -1 else ""))
        outcomes.append(((j.group_key, j.step_key, j.name), j.group_key or j.step_key, outcome))
    return _record(
        outcomes,
        rules,
        build=str(build.number),
        sha=sha,
        source="buildkite",
        state=job_name(build.state) if build.state else "",
        failing=tuple(failing),
        url=build.url if _plain_url(build.url) else "",
        recorded_at=recorded_at,
    )


def _outcome(j: Any, earlier: list[Any]) -> Outcome:
    """A job's last attempt, as counted: an agent lost before it (exit -1 every time) and a
    failed test before it are told apart."""
    if j.state == "passed" or (j.soft_failed and j.state == "failed"):
        if earlier and all(e.exit_status == -1 for e in earlier):
            return "lost"
        return "flaky" if earlier else "passed"
    if j.state in _FAILED:
        return "failed"
    return "not run" if j.state in _NOT_RUN else "pending"


def _record(
    outcomes: Sequence[tuple[tuple[str, ...], str, Outcome]], rules: Sequence[GroupRule], **fields: Any
) -> CiRecord:
    """The record of ``outcomes``: the counts of the whole, and of each group."""
    count = {k: sum(o == k for _, _, o in outcomes) for k in ("passed", "lost", "flaky", "failed", "pending")}
    return CiRecord(
        passed=count["passed"] + count["lost"] + count["flaky"],
        failed=count["failed"],
        pending=count["pending"],
        agent_lost=count["lost"],
        retried_failures=count["flaky"],
        groups=tally(rules, outcomes),
        **fields,
    )


def _attempts_before(job: Any, previous: dict[str, list[Any]]) -> list[Any]:
    out: list[Any] = []
    todo = list(previous.get(job.id, ()))
    while todo and len(out) < 100:  # a chain of retries, bounded (ids could loop)
        j = todo.pop()
        out.append(j)
        todo += [p for p in previous.get(j.id, ()) if p not in out]
    return out


def summarise_checks(
    runs: Sequence[Any], sha: str, recorded_at: str = "", rules: Sequence[GroupRule] = ()
) -> CiRecord:
    """The head's GitHub check runs (:class:`vimesync.github.CheckRun`), by workflow (a run's
    ``workflow``, else its app): no agent loss can be told from them, and a re-run replaces the
    run it re-runs."""
    failing: list[str] = []
    outcomes: list[tuple[tuple[str, ...], str, Outcome]] = []
    for r in runs:
        outcome: Outcome
        if r.status != "completed":
            outcome = "pending"
        elif r.conclusion == "success":
            outcome = "passed"
        elif r.conclusion in ("neutral", "skipped"):
            outcome = "not run"
        else:
            outcome = "failed"
            if len(failing) < MAX_FAILING:
                failing.append(job_name(r.name))
        workflow = getattr(r, "workflow", "") or r.app
        labels = (workflow, f"{workflow} / {r.name}" if workflow else r.name, r.name)
        outcomes.append((labels, workflow, outcome))
    return _record(
        outcomes,
        rules,
        build="github",
        sha=sha,
        source="github",
        state="",
        failing=tuple(failing),
        recorded_at=recorded_at,
    )


def _plain_url(url: str) -> bool:
    return url.startswith(("https://", "http://")) and len(url) <= 1024 and not CONTROL.search(url)


def _count(n: int, word: str) -> str:
    return f"one {word}" if n == 1 else plural(n, word)


def ci_phrase(rec: CiRecord, shown: Callable[[str], str] | None = None) -> str:
    """``#1445 passed 49 jobs; one agent-lost job passed on an unchanged retry`` (the name is
    a number or fixed text; the failing jobs' names are the caller's to show, escaped). With
    ``shown`` (how a group's name is escaped for the output) the groups follow the counts:
    ``#1445 passed 49 jobs (CPU checks 9/9; GPU jobs 40/40); ...``."""
    unit = "job" if rec.source == "buildkite" else "check run"
    if rec.ok:
        text = f"{rec.name} passed {plural(rec.passed, unit)}"
    elif rec.build_failed:  # the build's own word first: its jobs may all have passed
        state = f"build {rec.state}" if rec.state else "build state not recorded"
        text = f"{rec.name}: {state}; {_jobs(rec, unit)}"
    else:
        text = f"{rec.name}: {_jobs(rec, unit)}"
    if shown is not None and rec.groups:
        text += f" ({groups_phrase(rec.groups, shown)})"
    if rec.agent_lost:
        text += (
            "; one agent-lost job passed on an unchanged retry"
            if rec.agent_lost == 1
            else f"; {rec.agent_lost:,} agent-lost jobs passed on unchanged retries"
        )
    if rec.retried_failures:
        text += f"; {_count(rec.retried_failures, 'job')} failed a test, then passed on a retry (flaky)"
    return text


def _jobs(rec: CiRecord, unit: str) -> str:
    """``49 jobs, 48 passed, 1 failed`` (numbers only)."""
    parts = [f"{rec.passed:,} passed"]
    if rec.failed:
        parts.append(f"{rec.failed:,} failed")
    if rec.pending:
        parts.append(f"{rec.pending:,} pending")
    return f"{plural(rec.passed + rec.failed + rec.pending, unit)}, " + ", ".join(parts)


def ci_values(rec: CiRecord) -> dict[str, Any]:
    """The record's table as written."""
    return {
        "source": rec.source,
        "state": rec.state,
        "passed": rec.passed,
        "failed": rec.failed,
        "pending": rec.pending,
        "agent_lost": rec.agent_lost,
        "retried_failures": rec.retried_failures,
        "failing": list(rec.failing),
        "url": rec.url,
        "recorded_at": rec.recorded_at,
        "groups": {g.name: _group_values(g) for g in rec.groups},
    }


def _group_values(g: CiGroup) -> dict[str, Any]:
    """A group's table as written: its nonzero counts, and ``required`` when it is."""
    values: dict[str, Any] = {k: getattr(g, k) for k in _COUNTS if getattr(g, k)}
    return {**values, "required": True} if g.required else values


_COUNTS = ("passed", "failed", "pending", "agent_lost", "retried_failures")
