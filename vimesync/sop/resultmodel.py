"""The records of a sync (``sop/records/<sync>.toml``): suites and runs (:class:`TestRecord`,
:class:`RunRecord`), every kind of them together (:class:`Results`), and what of them is evidence
for one head (:class:`Evidence`). Pure: :mod:`vimesync.sop.results` reads and writes the file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vimesync.sop.cirecords import CiRecord
from vimesync.sop.measured import Measured
from vimesync.sop.precommit import PrecommitRecord
from vimesync.sop.regress import RegressRecord


@dataclass(frozen=True)
class TestRecord:
    suite: str
    sha: str  # the evidence head it was recorded at
    passed: int
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration: float = 0.0
    failing: tuple[str, ...] = ()
    image: str = ""
    recorded_at: str = ""

    __test__ = False  # not a pytest class

    @property
    def ok(self) -> bool:
        """Green: something ran and nothing failed or errored."""
        return self.passed > 0 and self.failed == 0 and self.errors == 0

    @property
    def name(self) -> str:
        return self.suite


@dataclass(frozen=True)
class RunRecord:
    name: str
    sha: str
    exit: int
    duration: float | None = None
    host: str = ""
    image: str = ""
    figures: tuple[tuple[str, str], ...] = ()
    note: str = ""
    recorded_at: str = ""
    measured: Measured | None = None  # vimesync ran it and saw this (None: typed by a person)
    run: int = 1  # its index among the independent runs of its name at its head (--again)

    @property
    def ok(self) -> bool:
        """Passed, or for a control run (--expect-exit/--expect-output), did what was expected."""
        return self.measured.as_expected(self.exit) if self.measured is not None else self.exit == 0

    @property
    def typed(self) -> bool:
        return self.measured is None


@dataclass(frozen=True)
class Results:
    """Every test and run record of a sync, in file order."""

    tests: tuple[TestRecord, ...] = ()
    runs: tuple[RunRecord, ...] = ()
    ci: tuple[CiRecord, ...] = ()  # snapshots of the CI jobs (sop/cirecords.py)
    precommit: tuple[PrecommitRecord, ...] = ()  # pre-commit on the changed files (sop/precommit.py)
    regress: tuple[RegressRecord, ...] = ()  # before/after matrices (sop/regress.py)

    @property
    def records(self) -> tuple[AnyRecord, ...]:
        return (*self.tests, *self.runs, *self.ci, *self.precommit, *self.regress)


AnyRecord = TestRecord | RunRecord | CiRecord | PrecommitRecord | RegressRecord
_KINDS = {TestRecord: "tests", RunRecord: "runs", CiRecord: "ci", PrecommitRecord: "precommit"}


def key_of(rec: AnyRecord) -> tuple[str, str, str, str]:
    """A record as it is, every value of it (kind, name, evidence head, then the whole record):
    what a commit claims. A record edited in any value, its figures or exit too, is another claim."""
    return (_KINDS.get(type(rec), "regress"), rec.name, rec.sha, repr(rec))


@dataclass(frozen=True)
class Evidence:
    """The records of a sync read for one head: those made at its evidence head are evidence,
    the others (earlier heads) are listed as not evidence for it."""

    sync: str
    head: str
    evidence_head: str  # the commit the records bind to (the head, or before records-only commits)
    results: Results
    committers: Mapping[tuple[str, str, str, str], str] = field(default_factory=dict)

    @property
    def tests(self) -> tuple[TestRecord, ...]:
        return tuple(t for t in self.results.tests if t.sha == self.evidence_head)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return tuple(r for r in self.results.runs if r.sha == self.evidence_head)

    @property
    def ci(self) -> tuple[CiRecord, ...]:
        return tuple(c for c in self.results.ci if c.sha == self.evidence_head)

    @property
    def precommit(self) -> tuple[PrecommitRecord, ...]:
        return tuple(p for p in self.results.precommit if p.sha == self.evidence_head)

    @property
    def regress(self) -> tuple[RegressRecord, ...]:
        return tuple(r for r in self.results.regress if r.sha == self.evidence_head)

    @property
    def not_evidence(self) -> tuple[AnyRecord, ...]:
        return tuple(r for r in self.results.records if r.sha != self.evidence_head)

    def committer(self, rec: AnyRecord) -> str | None:
        """Who committed ``rec`` (None: not committed, the working tree's claim only)."""
        return self.committers.get(key_of(rec))

    def with_committers(self, who: Mapping[tuple[str, str, str, str], str]) -> Evidence:
        from dataclasses import replace

        return replace(self, committers=dict(who))


def record_to_dict(rec: AnyRecord) -> dict[str, Any]:
    from dataclasses import asdict

    body = asdict(rec)
    if isinstance(rec, PrecommitRecord):
        return {"kind": "precommit", "name": rec.name, **body, "ok": rec.ok}
    if isinstance(rec, RegressRecord):
        body["cases"] = [{"test": c, "before": b, "after": a} for c, b, a in rec.cases]
        extra = {"not_proving": list(rec.not_proving), "not_present_before": list(rec.not_present_before)}
        return {"kind": "regress", **body, **extra, "ok": rec.ok}
    if isinstance(rec, CiRecord):
        body["failing"] = list(rec.failing)
        return {"kind": "ci", "name": rec.name, **body, "ok": rec.ok}
    if isinstance(rec, TestRecord):
        body["failing"] = list(rec.failing)
        body["ok"] = rec.ok
        return {"kind": "tests", "name": rec.name, **body}
    body["figures"] = dict(rec.figures)
    body["ok"] = rec.ok
    return {"kind": "run", **body}
