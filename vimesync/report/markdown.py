"""Render a SyncReport as GitHub-flavoured markdown: stable (same report, same bytes) and safe
(titles and descriptions are escaped, so they cannot break a table, open HTML, or forge the
publish markers). The Summary and the merge gates are written here; the other sections by
``enginemd``, ``auditmd``, ``validationmd``, ``imagesmd`` and ``evidencemd``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vimesync.git import NULL_SHA
from vimesync.report.auditmd import render_audit, render_own
from vimesync.report.enginemd import render_engines
from vimesync.report.evidencemd import render_ci, render_evidence
from vimesync.report.imagesmd import render_images
from vimesync.report.links import Ref
from vimesync.report.mdtext import code, escape, link
from vimesync.report.mentions import finish_markdown
from vimesync.report.model import PrLine, Skipped, Summary, SyncReport
from vimesync.report.resolvedmd import render_resolutions
from vimesync.report.validationmd import render_validations
from vimesync.sop.gates import Gate
from vimesync.text import plural

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # the head as git resolved it, nothing else


def _pr_item(pr: PrLine, repo: str | None, *, reason: bool = False, changed: int = 0) -> str:
    line = f"- {link(pr.ref)} {escape(pr.title, repo=repo)}".rstrip()
    if changed:
        line += f" — carried with changes ({plural(changed, 'file')} resolved by hand)"
    if pr.reverted_by is not None:
        line += f" (reverted by {link(pr.reverted_by)})"
    if pr.partial_paths:
        line += " (without " + ", ".join(code(p) for p in pr.partial_paths) + ")"
    if reason:
        why = escape(pr.reason, repo=repo) if pr.reason else "no reason given"
        rule = f" (policy rule {pr.rule})" if pr.rule is not None else ""
        line += f": {why}{rule}"
    return line


def _applicable_fact(s: Summary, changed: int) -> str:
    """``3 applicable merged PRs (3 carried, 1 of them with changes, 1 not carried)``: the PRs walk
    lists, the applicable ones split into what the head carries (resolved by hand or not) and not."""
    fact = plural(len(s.applicable) + len(s.not_carried), "applicable merged PR")
    counts = [f"{len(s.applicable):,} carried"] if s.not_carried or changed else []
    if changed:
        counts.append(f"{changed:,} of them with changes")
    if s.not_carried:
        counts.append(f"{len(s.not_carried):,} not carried")
    return fact + (f" ({', '.join(counts)})" if counts else "")


def render_summary(s: Summary | Skipped) -> list[str]:
    out = ["## Summary", ""]
    if isinstance(s, Skipped):
        return [*out, escape(s.reason)]
    changed = {pr.number: len(r.files) for pr in s.applicable if (r := s.with_changes(pr)) is not None}
    facts = [_applicable_fact(s, len(changed))]
    if s.excluded:
        facts.append(f"{len(s.excluded):,} excluded")
    if s.mirrored:
        facts.append(f"{len(s.mirrored):,} already mirrored")
    if s.direct_commits:
        facts.append(plural(len(s.direct_commits), "direct commit"))
    start = "its first commit" if s.base == NULL_SHA else s.base[:8]
    out.append(
        f"Mirror {escape(s.upstream_name)} from {start} through {s.tip[:8]}: " + "; ".join(facts) + "."
    )
    repo = s.upstream_repo
    if s.applicable:
        out += ["", *(_pr_item(pr, repo, changed=changed.get(pr.number, 0)) for pr in s.applicable)]
    if s.not_carried:
        out += ["", "Not carried:", "", *(_pr_item(pr, repo, reason=True) for pr in s.not_carried)]
    if s.excluded:
        out += ["", "Excluded:", "", *(_pr_item(pr, repo, reason=True) for pr in s.excluded)]
    if s.included:
        out += ["", "Requested inclusions:", "", *(_pr_item(pr, repo, reason=True) for pr in s.included)]
    if s.mirrored:
        out += ["", "Already mirrored downstream:", ""]
        for pr in s.mirrored:
            how = f" (by {escape(pr.mirrored_by)})" if pr.mirrored_by else ""
            out.append(_pr_item(pr, repo) + how)
    if s.direct_commits:
        out += ["", "Direct commits (not from a PR):", ""]
        for c in s.direct_commits:
            sha = link(Ref(text=c.sha[:8], url=c.url)) if c.url else code(c.sha[:8])
            out.append(f"- {sha} {escape(c.title, repo=repo)}".rstrip())
    out += render_resolutions(s)
    if s.notes:
        out += ["", "Notes:", "", *(f"- {escape(n)}" for n in s.notes)]
    return out


def _ci_lines(report: SyncReport) -> list[str]:
    off = dict(report.gates_off)
    if isinstance(report.ci, Skipped) and "ci" in off:
        return [f"Exact-head CI: switched off ({escape(off['ci'])})."]
    return render_ci(report.ci)


_GATE_MARK = {"held": "✓", "failed": "✗", "pending": "⏳", "blocked": "⛔", "not checked": "?", "off": "–"}


def render_gates(gates: Sequence[Gate]) -> list[str]:
    """The merge gates the report covers, each with its state. What moves an unmet one is the
    maintainer's to read (stderr, the JSON's ``command``), not the reviewer's: not in the body."""
    out = ["Merge gates (the report exits 0 only when every one holds):", ""]
    for g in gates:
        out.append(f"- {_GATE_MARK[g.state]} **{g.name}**: {g.state} — {escape(g.detail)}")
    return out


def render_markdown(report: SyncReport) -> str:
    """The whole report: four ``##`` sections, LF line endings, one trailing newline; @mentions
    neutralised (``<code>@name</code>``) and the publish markers' text made inert."""
    blocks = [
        render_summary(report.summary),
        render_engines(report.engines),
        render_audit(report.audit, report.upstream_name, report.downstream_name),
        # Only with a downstream range to read: a report without one has no such section.
        *([] if isinstance(report.own, Skipped) else [render_own(report.own)]),
        [
            *render_validations(report.validations),
            *(
                ["", f"Final commit: {report.head}."]
                if report.head and _FULL_SHA.fullmatch(report.head)
                else []
            ),
            "",
            *_ci_lines(report),
            *(["", *render_images(report.images)] if report.images is not None else []),
            *(["", *render_evidence(report.evidence)] if report.evidence is not None else []),
            "",
            *render_gates(report.gates),
        ],
    ]
    text = "\n\n".join("\n".join(b) for b in blocks) + "\n"
    # Last, on the final text: no @mention pings anyone and no publish marker can be planted,
    # whether the report is published, written with --output or printed.
    return finish_markdown(text)
