"""The report model: the facts of a sync PR description — its Summary, one Engine patches table
and one Validation line per engine, the Final audit, the exact-head CI and the evidence — and the
gates it covers, each evaluated.

Pure: :mod:`vimesync.report.build` makes it from the steps' models (the walk, the check, the
audit); markdown.py and document.py render it. A section whose inputs were not given is a
:class:`Skipped` carrying the one line that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vimesync.audit.model import AuditResult
from vimesync.audit.owncommits import OwnChanges
from vimesync.carry.resolutions import Resolution, Resolutions
from vimesync.check.model import CheckReport
from vimesync.ci.verdict import CiEvidence
from vimesync.report.links import Ref
from vimesync.sop.gates import REPORT_GATES, Gate, GateState, carried_gate, gate, off_gate
from vimesync.sop.records import ImageEvidence
from vimesync.sop.results import Evidence
from vimesync.text import of_total, plural

if TYPE_CHECKING:
    from vimesync.report.radar import RefState

TITLE_PRS = 2  # PR numbers the title names
CI_NOT_ASKED = "Exact-head CI was not asked for (--ci-repo, or [ci] repo): not checked."
NOT_AT_HEAD = "No --downstream and --baseline: what the head carries was not looked at."
ENABLE_AT_HEAD = "pass --downstream PATH and --baseline <pre-sync commit>"


@dataclass(frozen=True)
class Skipped:
    """A section that could not be produced, and the one line that says why."""

    reason: str


@dataclass(frozen=True)
class PrLine:
    ref: Ref
    title: str
    reason: str = ""  # the policy's reason (excluded, requested inclusion)
    rule: int | None = None  # the deciding rule's 1-based index
    partial_paths: tuple[str, ...] = ()  # paths left out of an otherwise applicable PR
    mirrored_by: str | None = None
    reverted_by: Ref | None = None  # a later PR of the same range that reverts this one
    number: int | None = None  # the upstream PR's number (its ref's text may be a URL)


@dataclass(frozen=True)
class CommitLine:
    sha: str
    title: str
    url: str  # "" when the upstream repo is unknown


@dataclass(frozen=True)
class Summary:
    upstream_name: str
    upstream_repo: str | None
    base: str
    tip: str
    applicable: tuple[PrLine, ...]  # merge order; includes the requested inclusions
    excluded: tuple[PrLine, ...]
    included: tuple[PrLine, ...]  # applicable because a policy rule asked for them
    mirrored: tuple[PrLine, ...]  # already carried downstream
    direct_commits: tuple[CommitLine, ...]
    notes: tuple[str, ...] = ()  # what the walk wants the reader to know (not errors)
    # Whether ``applicable`` is what the head carries (mirrored at the head, not at the baseline);
    # then ``not_carried`` holds the applicable PRs the head does not carry, each with its reason.
    head_known: bool = False
    not_carried: tuple[PrLine, ...] = ()
    # The carried items whose conflicts the maintainer resolved (replayed: carry/replay.py);
    # None when the carry was not replayed (the head not looked at).
    resolutions: Resolutions | None = None

    def with_changes(self, pr: PrLine) -> Resolution | None:
        """The resolution of a carried PR: it is "carried with changes"."""
        if self.resolutions is None or pr.number is None:
            return None
        return self.resolutions.of_pr(pr.number)

    @property
    def classified(self) -> int:
        """Every PR of the range, as ``walk`` lists them (carried or not, excluded, mirrored)."""
        return len(self.applicable) + len(self.not_carried) + len(self.excluded) + len(self.mirrored)


@dataclass(frozen=True)
class PatchRow:
    name: str
    has_header: bool  # False: no DEP-3 header at all -> the cell reads "—"
    purpose: str | None  # first line of Description/Subject
    description: str | None  # the whole Description/Subject
    refs: tuple[Ref, ...]
    # What the check found that the maintainer must act on: "already applied in the pin",
    # "partly applied (2 of 5 hunks)", "upstreamed at 1a2b3c4d"; None when nothing to say.
    status: str | None = None
    # Against the pre-sync baseline's series: "added", "changed" (its diff differs), "header
    # changed" (its DEP-3 header only) or "unchanged", then "; strip -p1 → -p0" when its strip
    # level moved; None when the baseline was not read.
    change: str | None = None
    # The work tree holds another DEP-3 header for it than the head (written by `patches
    # describe`, not committed): the report, which reads the head, says so.
    header_uncommitted: bool = False
    # Where the engine PRs (and commits) its header names stand upstream, and whether the pin
    # holds them (report/radar.py); () when it names none or they were not asked about.
    upstream: tuple[RefState, ...] = ()


@dataclass(frozen=True)
class EnginePatches:
    engine: str
    pin: str | None  # full sha of the pinned source, None when the source is not a git rev
    previous_pin: str | None  # the pin at the pre-sync baseline, when known
    source: str  # where the source was read from (for non-git sources)
    rows: tuple[PatchRow, ...]  # series order
    sha256: str | None = None  # an archive source verified against its pin's digest
    series: str | None = None  # the series file the rows come from
    removed: tuple[str, ...] = ()  # patches of the baseline's series the head's no longer lists
    repo: str | None = None  # the engine's GitHub repository (owner/name), when known
    # Why the engine PRs the headers name were not asked about ("no GITHUB_TOKEN ..."): the
    # table says their state was not checked. None: asked, or no header names one.
    upstream_not_checked: str | None = None


@dataclass(frozen=True)
class SyncReport:
    upstream_name: str
    summary: Summary | Skipped
    engines: tuple[EnginePatches | Skipped, ...]  # one Engine patches table per engine, config order
    audit: AuditResult | Skipped
    validations: tuple[CheckReport | Skipped, ...]  # one Validation line per engine, same order

    @property
    def engine(self) -> EnginePatches | Skipped:
        """The first (or only) engine's table."""
        return self.engines[0]

    @property
    def validation(self) -> CheckReport | Skipped:
        """The first (or only) engine's check."""
        return self.validations[0]

    ci: CiEvidence | Skipped = Skipped(
        "Exact-head CI was not asked for (--ci-repo, or [ci] repo): not checked."
    )
    gates_off: tuple[tuple[str, str], ...] = ()  # (gate, why it is switched off)
    images: ImageEvidence | None = None  # container images recorded for the head (sop/records/)
    evidence: Evidence | None = None  # test suites and manual runs recorded (sop/records/)
    tests_required: tuple[str, ...] = ()  # sop/gates.toml [evidence] required: the tests gate
    # The sync branch's commits carry did not make (Downstream changes in this sync).
    own: OwnChanges | Skipped = Skipped(
        "No downstream baseline was given: the sync's own commits are unknown."
    )

    head: str | None = None  # the full sha of the head the report describes (Validation's final commit)
    downstream_name: str = ""  # [downstream] name ("Vime"): "Vime-native overlays"; "" when unset

    @property
    def title(self) -> str:
        """A PR title: ``[Sync] Mirror Slime through 8c17b676 (#2437/#2434)``, naming the newest
        PRs carried (at most two, newest first); with applicable PRs the head does not carry,
        ``[Sync] Mirror Slime through 8c17b676, partly: 1 of 7 applicable PRs carried (#2410)``."""
        s = self.summary
        if isinstance(s, Summary):
            title = f"[Sync] Mirror {s.upstream_name} through {s.tip[:8]}"
            if s.not_carried:
                total = len(s.applicable) + len(s.not_carried)
                title += f", partly: {of_total(len(s.applicable), total, 'applicable PR')} carried"
            newest = [pr.ref.text.rpartition("#")[2] for pr in reversed(s.applicable)][:TITLE_PRS]
            return title + (f" ({'/'.join('#' + n for n in newest)})" if newest else "")
        return f"[Sync] {self.upstream_name}"

    @property
    def gates(self) -> tuple[Gate, ...]:
        """The gates this report covers, in the SOP's order, each evaluated (see sop/gates.py)."""
        off = dict(self.gates_off)
        out = []
        for name in REPORT_GATES:
            if name in off:
                out.append(off_gate(name, off[name]))
            else:
                out.append(_evaluate(self, name))
        return tuple(out)

    @property
    def gates_ok(self) -> bool:
        """Every gate the report covers was evaluated and holds (or is switched off)."""
        return all(g.ok for g in self.gates)

    @property
    def checks_ok(self) -> bool:
        """Every check that ran passed: patches apply, Python parses, every changed path reviewed."""
        ok = True
        for check in self.validations:
            if isinstance(check, CheckReport):
                ok = ok and check.ok
        if isinstance(self.audit, AuditResult):
            ok = ok and self.audit.ok
        if isinstance(self.summary, Summary):
            ok = ok and not self.summary.not_carried  # applicable PRs the head does not carry
        return ok


def _summary_gate(s: Summary | Skipped, name: str) -> Gate:
    """``classified`` (every PR of the range has a status) and ``carried`` (none applicable is
    left out of the head), both from the Summary."""
    if isinstance(s, Skipped):
        return gate(name, "not checked", s.reason)
    if name == "classified":
        return gate(name, "held", f"{plural(s.classified, 'PR')} of {s.base[:8]}..{s.tip[:8]} classified")
    if not s.head_known:
        return Gate(name, "not checked", NOT_AT_HEAD, ENABLE_AT_HEAD)
    return carried_gate(tuple(p.number or 0 for p in s.not_carried), s.classified)


def _evaluate(report: SyncReport, name: str) -> Gate:
    if name in ("classified", "carried"):
        return _summary_gate(report.summary, name)
    if name == "patches":  # every engine's check, each at its exact pin
        checks = report.validations
        for c in checks:
            if isinstance(c, Skipped):
                return gate(name, "not checked", c.reason)
        done = [c for c in checks if isinstance(c, CheckReport)]
        failing = [c for c in done if not c.ok]
        if not failing:
            return gate(
                name,
                "held",
                "; ".join(
                    f"{c.engine}: {plural(len(c.patches), 'patch', 'patches')} apply, the tree parses"
                    for c in done
                ),
            )
        parts = []
        for c in failing:
            failed = sum(1 for p in c.patches if not p.ok and not p.skipped)
            py = c.python
            bad = 0 if py is None else len(py.failed if c.strict else py.by_stack) + len(py.conflict_markers)
            parts.append(
                f"{c.engine}: {plural(failed, 'patch', 'patches')} failing, {plural(bad, 'parse problem')}"
            )
        return gate(name, "failed", "; ".join(parts))
    if name == "audit":
        a = report.audit
        if isinstance(a, Skipped):
            return gate(name, "not checked", a.reason)
        if a.ok:
            return gate(name, "held", f"{plural(len(a.paths), 'changed path')}, all reviewed or verified")
        return gate(
            name,
            "failed",
            f"{len(a.unreviewed):,} unreviewed and {len(a.stale):,} stale of {plural(len(a.paths), 'path')}",
        )
    if name == "tests":
        from vimesync.report.evidence import tests_gate

        return tests_gate(report.evidence, report.tests_required)
    if name == "ci":
        from vimesync.report.evidence import with_ci_records

        e = report.ci
        if isinstance(e, Skipped):
            return with_ci_records(gate(name, "not checked", e.reason), report.evidence)
        state: GateState = "held" if e.green else "pending" if e.verdict == "pending" else "failed"
        return with_ci_records(gate(name, state, f"{e.verdict} at {e.sha[:8]}"), report.evidence)
    raise AssertionError(name)
