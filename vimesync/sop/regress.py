"""A before/after regression matrix (``vimesync sop regress``): the named tests run at the
baseline (or ``--before REV``) and at the head, each case's two outcomes recorded in
``sop/records/<sync>.toml``::

    [regress."serving regressions".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    before = "4c193f1f…"            # the commit the "before" run checked out
    recorded_at = "2026-11-30T19:00:00Z"

    [regress."serving regressions".f32a36f1d8f811260f92c1901e808c35ad13c4ea.cases]
    "tests/test_serving.py::test_mask_ids" = ["failed", "passed"]
    "tests/test_serving.py::test_sse_end" = ["missing", "passed"]   # not present before

Cases are keyed by the node ids pytest collected for the ids the maintainer named (a file names
each of its tests; see :mod:`vimesync.sop.pytestids`).

Read as the seed's line: "6 failed, 2 passed before; 8 passed after". A case that passes before
and after is called out: it does not prove the fix. Pure: data in, data out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["passed", "failed", "error", "skipped", "missing"]
OUTCOMES: tuple[Outcome, ...] = ("failed", "error", "passed", "skipped", "missing")
MAX_CASES = 1_000  # cases stored in one matrix
DEFAULT_NAME = "regression matrix"


@dataclass(frozen=True)
class RegressRecord:
    name: str
    sha: str  # the evidence head (the "after" run checked out the head itself)
    before: str  # the commit of the "before" run
    cases: tuple[tuple[str, Outcome, Outcome], ...]  # (test id, before, after), in id order
    recorded_at: str = ""

    @property
    def ok(self) -> bool:
        """Every case passed at the head (and there was one)."""
        return bool(self.cases) and all(after == "passed" for _, _, after in self.cases)

    @property
    def not_proving(self) -> tuple[str, ...]:
        """Cases that passed before and after: they do not prove the fix."""
        return tuple(c for c, before, after in self.cases if before == after == "passed")

    @property
    def not_present_before(self) -> tuple[str, ...]:
        return tuple(c for c, before, _ in self.cases if before == "missing")

    @property
    def failing_after(self) -> tuple[str, ...]:
        return tuple(c for c, _, after in self.cases if after != "passed")

    def counts(self, side: Literal["before", "after"]) -> dict[Outcome, int]:
        i = 1 if side == "before" else 2
        out: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        for case in self.cases:
            out[case[i]] += 1  # type: ignore[index]
        return out


def matrix(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[tuple[str, Outcome, Outcome], ...]:
    """Each case of either run (a case gone at the head is ``missing`` after), sorted by id."""
    ids = sorted(set(before) | set(after))
    return tuple((c, _outcome(before.get(c)), _outcome(after.get(c))) for c in ids)


def _outcome(value: str | None) -> Outcome:
    return value if value in OUTCOMES else "missing"


def _side(counts: Mapping[Outcome, int]) -> str:
    words = {"failed": "failed", "error": "errors", "passed": "passed", "skipped": "skipped"}
    parts = [f"{counts[o]:,} {words[o]}" for o in ("failed", "error", "passed", "skipped") if counts[o]]
    if counts["missing"]:
        parts.append(f"{counts['missing']:,} not present")
    return ", ".join(parts) or "nothing"


def regress_phrase(rec: RegressRecord) -> str:
    """``6 failed, 2 passed before; 8 passed after`` (numbers and fixed words only)."""
    text = f"{_side(rec.counts('before'))} before; {_side(rec.counts('after'))} after"
    if rec.not_proving:
        n = len(rec.not_proving)
        text += (
            f"; {n:,} passed before and after (does not prove the fix)"
            if n > 1
            else ("; one passed before and after (does not prove the fix)")
        )
    return text


def read_regress(path: str, name: str, sha: str, rec: dict[str, object]) -> RegressRecord:
    """The matrix of ``[regress.NAME.SHA]`` as the file holds it, every value checked."""
    import re

    from vimesync.errors import ConfigError
    from vimesync.sop.records import SHA

    where = f"[regress.{name!r}.{sha[:8]}]"
    before = rec.get("before")
    if not isinstance(before, str) or not SHA.fullmatch(before):
        raise ConfigError(path, f"{where} before must be a full commit sha")
    cases = rec.get("cases", {})
    if not isinstance(cases, dict) or len(cases) > MAX_CASES:
        raise ConfigError(path, f"{where} cases must be a table of at most {MAX_CASES:,} tests")
    control = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
    out: list[tuple[str, Outcome, Outcome]] = []
    for case, pair in cases.items():
        if not case or len(case) > 200 or control.search(case):
            raise ConfigError(path, f"{where} a test id must be one line of at most 200 characters")
        if not (isinstance(pair, list) and len(pair) == 2 and all(p in OUTCOMES for p in pair)):
            raise ConfigError(
                path, f"{where} {case[:40]!r} must be [before, after], each one of {', '.join(OUTCOMES)}"
            )
        out.append((case, pair[0], pair[1]))
    at = rec.get("recorded_at", "")
    if not isinstance(at, str) or len(at) > 40 or control.search(at):
        raise ConfigError(path, f"{where} recorded_at must be one line of at most 40 characters")
    return RegressRecord(name=name, sha=sha, before=before, cases=tuple(sorted(out)), recorded_at=at)


def regress_values(rec: RegressRecord) -> dict[str, object]:
    return {
        "before": rec.before,
        "recorded_at": rec.recorded_at,
        "cases": {c: [b, a] for c, b, a in rec.cases},
    }
