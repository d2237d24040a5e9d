"""The report model: the facts of a sync PR description, assembled from the walk (WalkResult),
the patch-stack check (CheckReport) and the changed-path audit (AuditResult).

Pure: :func:`build_report` takes those models (any of them may be missing) and returns a
:class:`SyncReport`; markdown.py and json.py render it. A section whose inputs were not given
is a :class:`Skipped` carrying the one line that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vimesync.audit.model import AuditResult
from vimesync.audit.owncommits import OwnChanges
from vimesync.check.model import CheckReport
from vimesync.ci.verdict import CiEvidence
from vimesync.patches.model import Dep3, PatchResult
from vimesync.report.links import GITHUB, Ref, dep3_refs, pr_ref
from vimesync.sop.gates import REPORT_GATES, Gate, gate, off_gate
from vimesync.sop.records import ImageEvidence
from vimesync.sop.results import Evidence
from vimesync.text import plural
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED, PullRequest, WalkResult

TITLE_PRS = 2  # PR numbers the title names
CI_NOT_ASKED = "Exact-head CI was not asked for (--ci-repo, or [ci] repo): not checked."


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
    # Against the pre-sync baseline's series: "added", "changed" (its file differs) or
    # "unchanged"; None when the baseline was not read.
    change: str | None = None


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

    @property
    def title(self) -> str:
        """A PR title: ``[Sync] Mirror Slime through 8c17b676 (#2437/#2434)``, naming the newest
        PRs carried (at most two, newest first)."""
        if isinstance(self.summary, Summary):
            title = f"[Sync] Mirror {self.summary.upstream_name} through {self.summary.tip[:8]}"
            newest = [pr.ref.text.rpartition("#")[2] for pr in reversed(self.summary.applicable)][:TITLE_PRS]
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


def _evaluate(report: SyncReport, name: str) -> Gate:
    if name == "classified":
        s = report.summary
        if isinstance(s, Skipped):
            return gate(name, "not checked", s.reason)
        return gate(name, "held", f"{plural(s.classified, 'PR')} of {s.base[:8]}..{s.tip[:8]} classified")
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
        e = report.ci
        if isinstance(e, Skipped):
            return gate(name, "not checked", e.reason)
        state = "held" if e.green else "failed"
        return gate(name, state, f"{e.verdict} at {e.sha[:8]}")  # type: ignore[arg-type]
    raise AssertionError(name)


def _pr_line(pr: PullRequest, repo: str | None, reverted_by: dict[int, int] | None = None) -> PrLine:
    d = pr.decision
    reverter = (reverted_by or {}).get(pr.number)
    return PrLine(
        reverted_by=pr_ref(repo, reverter) if reverter is not None else None,
        ref=pr_ref(repo, pr.number),
        number=pr.number,
        title=pr.title,
        reason=d.reason if d else "",
        rule=d.rule if d else None,
        partial_paths=d.partial_paths if d else (),
        mirrored_by=d.mirrored_by if d else None,
    )


NOT_YET = "not yet carried"
SKIPPED_AT_CONFLICT = "skipped at a conflict (vimesync carry --skip)"


def build_summary(
    walk: WalkResult,
    *,
    upstream_name: str,
    upstream_repo: str | None,
    carried: frozenset[int] | None = None,
    skipped: frozenset[int] = frozenset(),
) -> Summary:
    """The Summary facts of a walk. A PR without a decision counts as applicable.

    ``carried`` (the applicable PRs the head carries, when the head was looked at) splits the
    applicable PRs into carried ones (the Summary's list) and ``not_carried`` ones, with their
    reason: ``skipped`` names those a carry skipped at a conflict."""
    repo = upstream_repo or (walk.upstream if "/" in walk.upstream else None)

    def status(pr: PullRequest) -> str:
        return pr.decision.status if pr.decision else APPLICABLE

    applicable = [pr for pr in walk.prs if status(pr) == APPLICABLE]
    missing: list[PrLine] = []
    if carried is not None:
        missing = [
            replace(_pr_line(pr, repo), reason=SKIPPED_AT_CONFLICT if pr.number in skipped else NOT_YET)
            for pr in applicable
            if pr.number not in carried
        ]
        applicable = [pr for pr in applicable if pr.number in carried]
    reverted_by = {pr.reverts: pr.number for pr in walk.prs if pr.reverts is not None}
    return Summary(
        upstream_name=upstream_name,
        upstream_repo=repo,
        base=walk.base,
        tip=walk.tip,
        applicable=tuple(_pr_line(pr, repo, reverted_by) for pr in applicable),
        excluded=tuple(_pr_line(pr, repo) for pr in walk.prs if status(pr) == EXCLUDED),
        included=tuple(
            _pr_line(pr, repo) for pr in applicable if pr.decision and pr.decision.action == "include"
        ),
        mirrored=tuple(_pr_line(pr, repo) for pr in walk.prs if status(pr) == MIRRORED),
        direct_commits=tuple(
            CommitLine(sha=c.sha, title=c.title, url=f"{GITHUB}/{repo}/commit/{c.sha}" if repo else "")
            for c in walk.direct_commits
        ),
        notes=tuple(getattr(walk, "notes", ())),
        head_known=carried is not None,
        not_carried=tuple(missing),
    )


def build_engine(
    patches: Sequence[tuple[str, Dep3 | None]],
    *,
    engine: str,
    pin: str | None,
    source: str,
    engine_repo: str | None,
    previous_pin: str | None,
    sha256: str | None = None,
) -> EnginePatches:
    """The Engine patches facts: the pin and one row per (name, DEP-3 header), in series order."""
    return EnginePatches(
        sha256=sha256,
        engine=engine,
        pin=pin,
        previous_pin=previous_pin,
        source=source,
        rows=tuple(_row(name, dep3, engine_repo) for name, dep3 in patches),
    )


def _purpose(dep3: Dep3 | None) -> str | None:
    """The synopsis (first line) of Description, else the Subject unfolded onto one line."""
    if dep3 is None:
        return None
    desc = (dep3.get("description") or "").strip()
    if desc:
        return desc.splitlines()[0].strip()
    subject = " ".join((dep3.get("subject") or "").split())
    return subject or None


def _row(name: str, dep3: Dep3 | None, engine_repo: str | None) -> PatchRow:
    return PatchRow(
        name=name,
        has_header=dep3 is not None,
        purpose=_purpose(dep3),
        description=dep3.description if dep3 else None,
        refs=dep3_refs(dep3, default_repo=engine_repo),
    )


def build_report(
    *,
    walk: WalkResult | None = None,
    check: CheckReport | None = None,
    audit: AuditResult | None = None,
    upstream_name: str = "upstream",
    upstream_repo: str | None = None,
    engine_repo: str | None = None,
    previous_engine_pin: str | None = None,
    series: EnginePatches | None = None,
    skipped: dict[str, str] | None = None,
    carried: frozenset[int] | None = None,
    skipped_prs: frozenset[int] = frozenset(),
    engines: Sequence[tuple[EnginePatches | Skipped, CheckReport | Skipped]] = (),
    ci: CiEvidence | Skipped | None = None,
    own: OwnChanges | Skipped | None = None,
) -> SyncReport:
    """Assemble the report. Missing inputs become Skipped sections; ``skipped`` overrides their
    one-line reasons (keys "summary", "engine", "audit", "validation").

    The Engine patches table comes from ``check`` when the stack was checked, else from
    ``series`` (the series and headers read without a source, see ``generate.engine_from_series``).
    ``engines`` (table, validation) pairs, when given, are the sections of several engines."""
    why = {
        "summary": "No upstream range was given (--upstream/--range): no summary.",
        "engine": "No engine source or series was given (--source/--series): no patch table.",
        "audit": "No downstream baseline was given (--downstream/--baseline): no audit.",
        "validation": "No engine source or series was given (--source/--series): the stack was not checked.",
        **(skipped or {}),
    }
    report = SyncReport(
        upstream_name=upstream_name,
        summary=build_summary(
            walk,
            upstream_name=upstream_name,
            upstream_repo=upstream_repo,
            carried=carried,
            skipped=skipped_prs,
        )
        if walk
        else Skipped(why["summary"]),
        engines=tuple(e for e, _ in engines)
        or (
            _engine_of_check(check, engine_repo, previous_engine_pin)
            if check
            else series or Skipped(why["engine"]),
        ),
        audit=audit if audit else Skipped(why["audit"]),
        validations=tuple(v for _, v in engines) or (check if check else Skipped(why["validation"]),),
        ci=ci if ci is not None else Skipped(CI_NOT_ASKED),
    )
    return report if own is None else replace(report, own=own)


def engine_of_check(check: CheckReport, engine_repo: str | None, previous_pin: str | None) -> EnginePatches:
    """The Engine patches table of a checked stack: its pin and its patches' headers."""
    return _engine_of_check(check, engine_repo, previous_pin)


def _engine_of_check(check: CheckReport, engine_repo: str | None, previous_pin: str | None) -> EnginePatches:
    engine = build_engine(
        [(p.name, p.dep3) for p in check.patches],
        engine=check.engine,
        pin=check.source.rev,
        source=check.source.path,
        sha256=check.sha256,
        engine_repo=engine_repo,
        previous_pin=previous_pin,
    )
    where = "the pin" if check.source.rev else "the source"
    rows = tuple(
        replace(row, status=patch_status_note(p, where))
        for row, p in zip(engine.rows, check.patches, strict=True)
    )
    return replace(engine, rows=rows, series=str(check.series))


def patch_status_note(p: PatchResult, where: str = "the pin") -> str | None:
    """The Engine patches table's word on a patch the check found (partly) in the source."""
    notes = []
    if p.status == "already-applied":
        notes.append(f"already applied in {where}: drop it from the series")
    elif p.status == "partly-applied":
        notes.append(f"partly applied in {where} ({len(p.already_applied)} of {p.hunks} hunks)")
    if p.upstreamed:
        notes.append(f"upstreamed at {p.upstreamed[:12]}")
    return "; ".join(notes) or None
