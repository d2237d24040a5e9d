"""Judge the CI results of one commit: ``green``, ``pending``, ``failing`` or ``missing``.

Pure: :func:`judge` takes the records ``vimesync.github`` returns. A commit status counts once
per context (its latest); a check run once per app, name and check suite: two workflows with a
``lint`` job, or a push and a pull_request run, are two results, and every one must be green (a
pull request could otherwise add a passing run named like a failing one and hide it). A required
name is met by a status of that context, or by a check run named ``<app> / <name>`` (``GitHub
Actions / lint``): a check run never stands in for a status context of its bare name. A Buildkite
status shows as its pipeline and build number (``buildkite/vime #1454``, from the build's URL),
so a reader sees which build is the evidence. Results on other commits (a pull request's
earlier heads) are kept apart as "not evidence" and never counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from vimesync.github import CheckRun, CommitChecks, CommitStatus

State = Literal["success", "pending", "failure", "skipped"]
Verdict = Literal["green", "pending", "failing", "missing"]

_CHECK_OK = {"success": "success", "neutral": "skipped", "skipped": "skipped"}
_BUILDKITE = re.compile(r"https://buildkite\.com/[^/?#\s]+/([^/?#\s]+)/builds/([0-9]{1,12})(?:[/?#]|$)")


@dataclass(frozen=True)
class Result:
    """One context's latest result on one commit."""

    name: str  # what --require names: the status context, or the check run's name
    label: str  # how it is shown: "buildkite/vime #1454", "GitHub Actions / lint"
    kind: Literal["status", "check"]
    state: State
    raw: str  # GitHub's own word: the status state or the run's status/conclusion
    description: str
    url: str
    sha: str

    @property
    def aliases(self) -> tuple[str, ...]:
        """Every name a required context may use for this result: a status by its context (or
        its label), a check run only by its label, ``<app> / <name>`` (its bare name is anyone's:
        any workflow a pull request adds may have a job named ``buildkite/vime``)."""
        if self.kind == "check":
            return (self.label,)
        return (self.name, self.label) if self.label != self.name else (self.name,)


@dataclass(frozen=True)
class CiEvidence:
    repo: str
    sha: str  # the exact commit judged
    pr: int | None
    verdict: Verdict
    results: tuple[Result, ...]  # on ``sha``, sorted by label
    required: tuple[str, ...]
    missing: tuple[str, ...]  # required, never reported on ``sha``
    earlier: tuple[Result, ...] = ()  # on earlier heads of the PR: not evidence for ``sha``
    earlier_cut: int = 0  # earlier commits not looked at (beyond the bound)

    @property
    def failing(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.state == "failure")

    @property
    def pending(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.state == "pending")

    @property
    def green(self) -> bool:
        return self.verdict == "green"


def _status_state(state: str) -> State:
    if state == "success":
        return "success"
    if state in ("failure", "error"):
        return "failure"
    return "pending"


def _status_label(s: CommitStatus) -> str:
    m = _BUILDKITE.match(s.target_url)
    if m and s.context.startswith("buildkite/"):
        return f"{s.context} #{m[2]}"
    return s.context


def status_result(s: CommitStatus, sha: str) -> Result:
    return Result(
        name=s.context,
        label=_status_label(s),
        kind="status",
        state=_status_state(s.state),
        raw=s.state or "unknown",
        description=s.description,
        url=s.target_url,
        sha=sha,
    )


def run_result(r: CheckRun, sha: str) -> Result:
    if r.status != "completed":
        state: State = "pending"
        raw = r.status or "unknown"
    else:
        state = _CHECK_OK.get(r.conclusion or "", "failure")  # type: ignore[assignment]
        raw = r.conclusion or "no conclusion"
    return Result(
        name=r.name,
        label=f"{r.app} / {r.name}" if r.app else r.name,
        kind="check",
        state=state,
        raw=raw,
        description="",
        url=r.url,
        sha=sha,
    )


def results_of(checks: CommitChecks) -> tuple[Result, ...]:
    """Every result on ``checks.sha``: one per status context (the latest), one per check run of
    each app, name and check suite (the latest; every run when GitHub names no suite), sorted."""
    found: dict[tuple[str, str], Result] = {}
    for s in checks.statuses:
        found.setdefault(("status", s.context), status_result(s, checks.sha))
    for i, r in enumerate(checks.check_runs):
        suite = str(r.suite) if r.suite is not None else f"run {i}"
        found.setdefault(("check", f"{r.app}\0{r.name}\0{suite}"), run_result(r, checks.sha))
    return tuple(sorted(found.values(), key=lambda r: (r.label, r.kind, r.state)))


def judge(
    repo: str,
    checks: CommitChecks,
    *,
    required: Sequence[str] = (),
    pr: int | None = None,
    earlier: Iterable[CommitChecks] = (),
    earlier_cut: int = 0,
) -> CiEvidence:
    """The verdict on exactly ``checks.sha``: failing (any result failed) before pending (any
    still running) before missing (a required context never reported, or nothing reported at
    all) before green. Results of ``earlier`` commits are listed, never counted."""
    results = results_of(checks)
    names = {alias for r in results for alias in r.aliases}
    missing = tuple(c for c in dict.fromkeys(required) if c not in names)
    if any(r.state == "failure" for r in results):
        verdict: Verdict = "failing"
    elif any(r.state == "pending" for r in results):
        verdict = "pending"
    elif missing or not results:
        verdict = "missing"
    else:
        verdict = "green"
    return CiEvidence(
        repo=repo,
        sha=checks.sha,
        pr=pr,
        verdict=verdict,
        results=results,
        required=tuple(dict.fromkeys(required)),
        missing=missing,
        earlier=tuple(r for c in earlier if c.sha != checks.sha for r in results_of(c)),
        earlier_cut=earlier_cut,
    )


def evidence_to_dict(e: CiEvidence) -> dict[str, object]:
    """The ``--json`` document of ``vimesync ci`` (and the report's CI lines)."""

    def one(r: Result) -> dict[str, object]:
        return {
            "name": r.name,
            "label": r.label,
            "kind": r.kind,
            "state": r.state,
            "github_state": r.raw,
            "description": r.description,
            "url": r.url,
            "sha": r.sha,
        }

    return {
        "ok": e.green,
        "verdict": e.verdict,
        "repo": e.repo,
        "sha": e.sha,
        "pr": e.pr,
        "required": list(e.required),
        "missing": list(e.missing),
        "failing": [r.label for r in e.failing],
        "pending": [r.label for r in e.pending],
        "results": [one(r) for r in e.results],
        "not_evidence": [one(r) for r in e.earlier],
        "earlier_commits_not_read": e.earlier_cut,
    }
