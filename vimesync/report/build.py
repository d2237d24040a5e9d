"""The report model made from the steps' models: the Summary of a walk (what the head carries,
what it does not and why), an Engine patches table from a check or from a series and its
headers, and the whole :class:`SyncReport` from its parts. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vimesync.audit.model import AuditResult
from vimesync.audit.owncommits import OwnChanges
from vimesync.carry.resolutions import Resolutions
from vimesync.check.model import CheckReport
from vimesync.ci.verdict import CiEvidence
from vimesync.patches.model import Dep3, PatchResult
from vimesync.report.links import GITHUB, dep3_refs, pr_ref
from vimesync.report.model import (
    CI_NOT_ASKED,
    CommitLine,
    EnginePatches,
    PatchRow,
    PrLine,
    Skipped,
    Summary,
    SyncReport,
)
from vimesync.text import of_total
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED, PullRequest, WalkResult


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
    resolutions: Resolutions | None = None,
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
        resolutions=resolutions if carried is not None else None,
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
        repo=engine_repo,
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


@dataclass(frozen=True)
class ReportParts:
    """What a report is made of: the steps' models (any of them may be missing). The Engine
    patches table comes from ``check`` when the stack was checked, else from ``series`` (the
    series and headers read without a source); ``engines`` (table, validation) pairs, when given,
    are the sections of every engine, and the one-engine fields are not used."""

    walk: WalkResult | None = None
    check: CheckReport | None = None
    audit: AuditResult | None = None
    upstream_name: str = "upstream"
    upstream_repo: str | None = None
    engine_repo: str | None = None
    previous_engine_pin: str | None = None
    series: EnginePatches | None = None
    skipped: dict[str, str] | None = None  # one-line reasons over the defaults, by section
    carried: frozenset[int] | None = None  # the applicable PRs the head carries (None: not looked)
    skipped_prs: frozenset[int] = frozenset()  # those a carry skipped at a conflict
    resolutions: Resolutions | None = None  # the carried items' conflicts resolved by hand
    engines: Sequence[tuple[EnginePatches | Skipped, CheckReport | Skipped]] = ()
    ci: CiEvidence | Skipped | None = None
    own: OwnChanges | Skipped | None = None
    head: str | None = None
    downstream_name: str = ""  # [downstream] name, "" when the config names none


def build_report(parts: ReportParts) -> SyncReport:
    """Assemble the report. Missing inputs become Skipped sections; ``parts.skipped`` overrides
    their one-line reasons (keys "summary", "engine", "audit", "validation")."""
    p = parts
    why = {
        "summary": "No upstream range was given (--upstream/--range): no summary.",
        "engine": "No engine source or series was given (--source/--series): no patch table.",
        "audit": "No downstream baseline was given (--downstream/--baseline): no audit.",
        "validation": "No engine source or series was given (--source/--series): the stack was not checked.",
        **(p.skipped or {}),
    }
    summary = (
        build_summary(
            p.walk,
            upstream_name=p.upstream_name,
            upstream_repo=p.upstream_repo,
            carried=p.carried,
            skipped=p.skipped_prs,
            resolutions=p.resolutions,
        )
        if p.walk
        else Skipped(why["summary"])
    )
    check = p.check
    one = engine_of_check(check, p.engine_repo, p.previous_engine_pin) if check else p.series
    report = SyncReport(
        upstream_name=p.upstream_name,
        summary=summary,
        engines=tuple(e for e, _ in p.engines) or (one or Skipped(why["engine"]),),
        audit=p.audit if p.audit else Skipped(why["audit"]),
        validations=tuple(v for _, v in p.engines) or (check if check else Skipped(why["validation"]),),
        ci=p.ci if p.ci is not None else Skipped(CI_NOT_ASKED),
        head=p.head,
        downstream_name=p.downstream_name,
    )
    return report if p.own is None else replace(report, own=p.own)


def engine_of_check(check: CheckReport, engine_repo: str | None, previous_pin: str | None) -> EnginePatches:
    """The Engine patches table of a checked stack: its pin and its patches' headers."""
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
        notes.append(f"partly applied in {where} ({of_total(len(p.already_applied), p.hunks, 'hunk')})")
    if p.upstreamed:
        notes.append(f"upstreamed at {p.upstreamed[:12]}")
    return "; ".join(notes) or None
