"""CI jobs counted by step: each job of a snapshot (:mod:`vimesync.sop.cirecords`) falls in one
group, and the record keeps every group's counts beside the build's::

    [ci."1445".f32a36f1….groups."CPU checks"]
    passed = 9
    required = true                 # [[ci.groups]] required: not all green fails the ci gate

A job counts in the first ``[[ci.groups]]`` group (:mod:`vimesync.config.cigroups`) one of whose
patterns matches one of its labels in full; else in its own step's group (a Buildkite job's
group key, else its step key; a GitHub check run's workflow); else in "other jobs". Labels are
CI content (whoever writes a pipeline names its steps): shown on one line, capped, and at most
:data:`MAX_RECORDED` groups are kept (the rest count as "other jobs"). Pure: data in, data out."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from vimesync.config.cigroups import GroupRule

MAX_NAME = 200
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
MAX_RECORDED = 60  # groups kept in one record (more than [[ci.groups]] may name: 50)
MAX_GROUP_NAME = 80
OTHER = "other jobs"
Outcome = Literal["passed", "lost", "flaky", "failed", "pending", "not run"]


@dataclass(frozen=True)
class CiGroup:
    """One group's jobs, each counted by its last attempt (as the whole record counts them)."""

    name: str
    passed: int = 0  # agent-lost and flaky jobs that passed on a retry are among these
    failed: int = 0
    pending: int = 0
    agent_lost: int = 0
    retried_failures: int = 0
    required: bool = False

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.pending

    @property
    def ok(self) -> bool:
        """Something ran and every last attempt passed."""
        return self.passed > 0 and self.failed == 0 and self.pending == 0

    @property
    def unmet(self) -> bool:
        """Required, and not all green (no job ran in it, one failed, or one still runs)."""
        return self.required and not self.ok


_ADD = {
    "passed": ("passed",),
    "lost": ("passed", "agent_lost"),
    "flaky": ("passed", "retried_failures"),
    "failed": ("failed",),
    "pending": ("pending",),
    "not run": (),
}


class Grouper:
    """The configured rules, compiled once (RE2: a pattern is repository content)."""

    def __init__(self, rules: Sequence[GroupRule]) -> None:
        from vimesync.regex import compile_re2

        self.rules = tuple(rules)
        self._compiled = [[compile_re2(p) for p in r.match] for r in self.rules]

    def group_of(self, labels: Sequence[str], own: str) -> str:
        """The first rule matching one of ``labels`` in full, else ``own`` (its step's), else OTHER."""
        for rule, patterns in zip(self.rules, self._compiled, strict=True):
            if any(p.fullmatch(label) for p in patterns for label in labels if label):
                return rule.name
        return group_name(own) if own else OTHER


def job_name(value: str) -> str:
    """A job's name as it may be stored: one line, control characters shown as ``?``, capped."""
    return CONTROL.sub("?", value).strip()[:MAX_NAME] or "(unnamed)"


def group_name(value: str) -> str:
    """A step key or workflow as a group's name: one line, control characters shown as ``?``."""
    return job_name(value)[:MAX_GROUP_NAME]


def tally(
    rules: Sequence[GroupRule], jobs: Sequence[tuple[Sequence[str], str, Outcome]]
) -> tuple[CiGroup, ...]:
    """The groups of ``jobs`` (labels, own step's group, outcome): the configured groups first
    (in config order; a required one even when no job fell in it: then it is unmet), then
    the steps' own groups in order of first appearance, at most :data:`MAX_RECORDED`. No rule and
    no job naming its step: no groups (a record of numbered jobs is counted as a whole)."""
    if not rules and not any(own for _, own, _ in jobs):
        return ()
    grouper = Grouper(rules)
    counts: dict[str, dict[str, int]] = {r.name: {} for r in rules}
    for labels, own, outcome in jobs:
        name = grouper.group_of(labels, own)
        if name not in counts and len(counts) >= MAX_RECORDED - 1:
            name = OTHER
        bucket = counts.setdefault(name, {})
        for key in _ADD[outcome]:
            bucket[key] = bucket.get(key, 0) + 1
    required = {r.name for r in rules if r.required}
    groups = [CiGroup(name, **c, required=name in required) for name, c in counts.items()]
    return tuple(g for g in groups if g.total or g.required)


def groups_phrase(groups: Sequence[CiGroup], shown: Callable[[str], str] = str) -> str:
    """``CPU checks 9/9; GPU jobs 40/40`` (``shown``: how a group's name is escaped for the
    output; the counts are numbers only)."""
    parts = []
    for g in groups:
        text = f"{shown(g.name)} {g.passed:,}/{g.total:,}"
        if g.pending:
            text += f", {g.pending:,} pending"
        if g.required and not g.total:
            text += " (required: no job ran)"
        elif g.unmet:
            text += " (required)"
        parts.append(text)
    return "; ".join(parts)
