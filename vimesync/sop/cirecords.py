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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vimesync.text import plural

BUILD = re.compile(r"[0-9]{1,9}|github")
MAX_FAILING = 20
MAX_NAME = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
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
        return self.passed > 0 and self.failed == 0 and self.pending == 0 and not self.build_failed


def job_name(value: str) -> str:
    """A job's name as it may be stored: one line, control characters shown as ``?``, capped."""
    return _CONTROL.sub("?", value).strip()[:MAX_NAME] or "(unnamed)"


def summarise_buildkite(build: Any, sha: str, recorded_at: str = "") -> CiRecord:
    """A :class:`vimesync.buildkite.Build`'s script jobs, each counted once by its last attempt."""
    jobs = [j for j in build.jobs if j.type in ("script", "")]
    previous: dict[str, list[Any]] = {}
    for j in jobs:
        if j.retried and j.retried_in_job_id:
            previous.setdefault(j.retried_in_job_id, []).append(j)
    passed = failed = pending = lost = flaky = 0
    failing: list[str] = []
    for j in build.jobs:  # a trigger step that failed fails the build: named with the failing
        if j.type == "trigger" and not j.retried and j.state in _FAILED and len(failing) < MAX_FAILING:
            failing.append(job_name(j.name) + " (trigger step)")
    for j in (j for j in jobs if not j.retried):
        earlier = _attempts_before(j, previous)
        if j.state == "passed" or (j.soft_failed and j.state == "failed"):
            passed += 1
            if earlier and all(e.exit_status == -1 for e in earlier):
                lost += 1
            elif earlier:
                flaky += 1
        elif j.state in _FAILED:
            failed += 1
            why = " (agent lost)" if j.exit_status == -1 else ""
            if len(failing) < MAX_FAILING:
                failing.append(job_name(j.name) + why)
        elif j.state not in _NOT_RUN:
            pending += 1
    return CiRecord(
        build=str(build.number),
        sha=sha,
        source="buildkite",
        state=job_name(build.state) if build.state else "",
        passed=passed,
        failed=failed,
        pending=pending,
        agent_lost=lost,
        retried_failures=flaky,
        failing=tuple(failing),
        url=build.url if _plain_url(build.url) else "",
        recorded_at=recorded_at,
    )


def _attempts_before(job: Any, previous: dict[str, list[Any]]) -> list[Any]:
    out: list[Any] = []
    todo = list(previous.get(job.id, ()))
    while todo and len(out) < 100:  # a chain of retries, bounded (ids could loop)
        j = todo.pop()
        out.append(j)
        todo += [p for p in previous.get(j.id, ()) if p not in out]
    return out


def summarise_checks(runs: Sequence[Any], sha: str, recorded_at: str = "") -> CiRecord:
    """The head's GitHub check runs (:class:`vimesync.github.CheckRun`): no agent loss can be
    told from them, and a re-run replaces the run it re-runs."""
    passed = failed = pending = 0
    failing: list[str] = []
    for r in runs:
        if r.status != "completed":
            pending += 1
        elif r.conclusion == "success":
            passed += 1
        elif r.conclusion in ("neutral", "skipped"):
            continue
        else:
            failed += 1
            if len(failing) < MAX_FAILING:
                failing.append(job_name(r.name))
    return CiRecord(
        build="github",
        sha=sha,
        source="github",
        state="",
        passed=passed,
        failed=failed,
        pending=pending,
        failing=tuple(failing),
        recorded_at=recorded_at,
    )


def _plain_url(url: str) -> bool:
    return url.startswith(("https://", "http://")) and len(url) <= 1024 and not _CONTROL.search(url)


def _count(n: int, word: str) -> str:
    return f"one {word}" if n == 1 else plural(n, word)


def ci_phrase(rec: CiRecord) -> str:
    """``#1445 passed 49 jobs; one agent-lost job passed on an unchanged retry`` (the name is
    a number or fixed text; the failing jobs' names are the caller's to show, escaped)."""
    unit = "job" if rec.source == "buildkite" else "check run"
    if rec.ok:
        text = f"{rec.name} passed {plural(rec.passed, unit)}"
    elif rec.build_failed:  # the build's own word first: its jobs may all have passed
        state = f"build {rec.state}" if rec.state else "build state not recorded"
        text = f"{rec.name}: {state}; {_jobs(rec, unit)}"
    else:
        text = f"{rec.name}: {_jobs(rec, unit)}"
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
    }
