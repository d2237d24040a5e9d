"""Render a SyncReport as GitHub-flavoured markdown: stable (same report, same bytes) and safe
(titles and descriptions are escaped, so they cannot break a table, open HTML, or forge the
publish markers)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vimesync.check.model import CheckReport
from vimesync.ci.verdict import CiEvidence, Result
from vimesync.git import NULL_SHA
from vimesync.patches.model import HunkFailure, PatchResult

# The shared text helpers, still importable from here.
from vimesync.report.auditmd import render_audit, render_own
from vimesync.report.evidence import run_phrase, tests_phrase
from vimesync.report.imagesmd import render_images
from vimesync.report.links import Ref
from vimesync.report.mdtext import (
    DASH,
    MAX_LIST,
    MAX_REFS,
    _capped,
    cell,
    code,
    escape,
    link,
    rev,
    safe_url,
)
from vimesync.report.mentions import neutralize_markers, neutralize_mentions
from vimesync.report.model import EnginePatches, PrLine, Skipped, Summary, SyncReport
from vimesync.sop.cirecords import CiRecord, ci_phrase
from vimesync.sop.gates import Gate
from vimesync.sop.precommit import PrecommitRecord, precommit_phrase
from vimesync.sop.regress import RegressRecord, regress_phrase
from vimesync.sop.results import AnyRecord, Evidence, RunRecord, TestRecord
from vimesync.text import plural, untouched_note

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # the head as git resolved it, nothing else

__all__ = [
    "DASH",
    "MAX_LIST",
    "MAX_REFS",
    "_capped",
    "cell",
    "code",
    "escape",
    "link",
    "render_audit",
    "rev",
    "safe_url",
]


# ---------------------------------------------------------------------------------------------
# Sections


def _pr_item(pr: PrLine, repo: str | None, *, reason: bool = False) -> str:
    line = f"- {link(pr.ref)} {escape(pr.title, repo=repo)}".rstrip()
    if pr.reverted_by is not None:
        line += f" (reverted by {link(pr.reverted_by)})"
    if pr.partial_paths:
        line += " (without " + ", ".join(code(p) for p in pr.partial_paths) + ")"
    if reason:
        why = escape(pr.reason, repo=repo) if pr.reason else "no reason given"
        rule = f" (policy rule {pr.rule})" if pr.rule is not None else ""
        line += f": {why}{rule}"
    return line


def render_summary(s: Summary | Skipped) -> list[str]:
    out = ["## Summary", ""]
    if isinstance(s, Skipped):
        return [*out, escape(s.reason)]
    # Counts of the PRs walk lists: the applicable ones split into what the head carries and not.
    applicable = len(s.applicable) + len(s.not_carried)
    facts = [plural(applicable, "applicable merged PR")]
    if s.not_carried:
        facts[0] += f" ({len(s.applicable):,} carried, {len(s.not_carried):,} not carried)"
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
        out += ["", *(_pr_item(pr, repo) for pr in s.applicable)]
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
    if s.notes:
        out += ["", "Notes:", "", *(f"- {escape(n)}" for n in s.notes)]
    return out


def _purpose_cell(row_purpose: str | None, has_header: bool, refs: Sequence[Ref]) -> str:
    if not has_header:
        return DASH
    parts = []
    for r in refs[:MAX_REFS]:
        parts.append(f"{r.kind} {link(r)}" if r.kind else link(r))
    if len(refs) > MAX_REFS:
        parts.append(f"and {plural(len(refs) - MAX_REFS, 'more reference')}")
    refs_text = ", ".join(parts)
    purpose = cell(row_purpose) if row_purpose else ""
    if purpose and refs_text:
        return f"{purpose}: {refs_text}"
    return purpose or refs_text or DASH


def shown_source(path: str) -> str:
    """A source as the PR text names it: its file or folder name (``vllm-0.32.0-...whl``), never
    a path of the maintainer's machine; the JSON document keeps the whole path."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


def render_engine(e: EnginePatches | Skipped, *, heading: bool = True) -> list[str]:
    out = ["## Engine patches", ""] if heading else []
    if isinstance(e, Skipped):
        return [*out, escape(e.reason)]
    engine = escape(e.engine)
    if e.pin is None and e.sha256:
        shown = code(shown_source(e.source))
        out.append(f"The {engine} source is {shown}, verified against its pin: sha256 {e.sha256}.")
    elif e.pin is None:
        out.append(f"The {engine} source is {code(shown_source(e.source))} (not a pinned git revision).")
    elif e.previous_pin == e.pin:
        out.append(f"The {engine} source pin remains {rev(e.pin)}.")
    elif e.previous_pin:
        out.append(f"The {engine} source pin is {rev(e.pin)} (was {rev(e.previous_pin)}).")
    else:
        out.append(f"The {engine} source pin is {rev(e.pin)}.")
    out.append("")
    if not e.rows:
        return [*out, "The series has no patches."]
    marked = any(row.change for row in e.rows) or bool(e.removed)
    out += (
        ["| Patch | Purpose / PR | Since the baseline |", "| --- | --- | --- |"]
        if marked
        else ["| Patch | Purpose / PR |", "| --- | --- |"]
    )
    for row in e.rows:
        purpose = _purpose_cell(row.purpose, row.has_header, row.refs)
        if row.status:
            purpose += f" (**{cell(row.status)}**)"
        change = f" {row.change or DASH} |" if marked else ""
        out.append(f"| {code(row.name, in_table=True)} | {purpose} |{change}")
    for name in e.removed:
        out.append(f"| {code(name, in_table=True)} | {DASH} | removed |")
    return out


def _source_line(text: str) -> str:
    """A line of a hunk or of the source, as code; a blank one as "(blank line)" (an empty code
    span would show nothing, or two stray backticks)."""
    return code(text.rstrip()) if text.strip() else "(blank line)"


def _failure(f: HunkFailure) -> str:
    where = code(f.file)
    if f.hunk:
        where += f" hunk #{f.hunk}"
        if f.header:
            where += f" ({code(f.header.strip())})"
    line = f"{where}: {escape(f.reason)}"
    detail = []
    if f.first_mismatch is not None:
        detail.append(f"first mismatch at hunk line {f.first_mismatch}")
    if f.expected is not None:
        detail.append(f"expected {_source_line(f.expected)}")
    if f.found is not None:
        detail.append(f"found {_source_line(f.found)}")
    if f.nearest_line is not None:
        detail.append(f"nearest match at line {f.nearest_line:,}")
    return line + (f" ({'; '.join(detail)})" if detail else "")


def _patch_failure_lines(p: PatchResult) -> list[str]:
    if p.skipped:
        return [f"- {code(p.name)}: not applied (an earlier patch failed)"]
    if p.status == "already-applied":
        why = f"all of its {plural(p.hunks, 'hunk')} apply in reverse"
        return [f"- {code(p.name)}: already applied ({why}): drop it from the series"]
    if not p.failures:
        return [f"- {code(p.name)}: failed"]
    done = set(p.already_applied)
    return [
        f"- {code(p.name)}: {_failure(f)}" + (" (already applied)" if (f.file, f.hunk) in done else "")
        for f in p.failures
    ]


def render_engines(engines: Sequence[EnginePatches | Skipped]) -> list[str]:
    """One Engine patches section: one table per engine, each under the sentence naming its pin."""
    out = render_engine(engines[0])
    for e in engines[1:]:
        out += ["", *render_engine(e, heading=False)]
    return out


def render_validations(checks: Sequence[CheckReport | Skipped]) -> list[str]:
    """One Validation section: one line (and its failures) per engine, named when there are several."""
    if len(checks) == 1:
        return render_validation(checks[0])
    out = ["## Validation"]
    for c in checks:
        lines = render_validation(c, heading=False)
        name = f"{escape(c.engine)}: " if isinstance(c, CheckReport) else ""
        out += ["", name + lines[0], *lines[1:]]
    return out


def render_validation(c: CheckReport | Skipped, *, heading: bool = True) -> list[str]:
    out = ["## Validation", ""] if heading else []
    if isinstance(c, Skipped):
        return [*out, escape(c.reason)]
    shown = code(shown_source(c.source.path))
    target = f"the exact pin {rev(c.source.rev)}" if c.source.rev else f"the source {shown}"
    py = c.python
    n = len(c.patches)
    applied = len(c.already_applied)
    if c.patches_ok and applied:  # --keep-going: a patch the source holds is a note, not a failure
        are, them = ("is", "it") if applied == 1 else ("are", "them")
        head = (
            f"{n - applied:,} of {plural(n, 'patch', 'patches')} apply sequentially to {target} and"
            f" {applied:,} {are} already applied there (drop {them} from the series)"
        )
    elif c.patches_ok:
        head = f"All {plural(n, 'patch', 'patches')} apply sequentially to {target}"
    else:
        # Patches after a failure are not tried (skipped): they neither applied nor failed.
        failed = sum(1 for p in c.patches if not p.ok and not p.skipped)
        skipped = sum(1 for p in c.patches if p.skipped)
        verb = "fails" if failed == 1 else "fail"
        head = f"{failed:,} of {plural(n, 'patch', 'patches')} {verb} to apply sequentially to {target}"
        if skipped:
            them = "it" if failed == 1 else "them"
            after = f"the one after {them} was" if skipped == 1 else f"the {skipped:,} after {them} were"
            head += f"; {after} not applied"
    if py is None:
        out.append(f"{head}; the patched Python files were not parsed.")
    elif py.ok:
        out.append(f"{head}; {plural(py.files, 'patched Python file')} parse successfully.")
    elif c.parse_ok:
        n = len(py.at_pin)
        what = f"{n:,} {'fails' if n == 1 else 'fail'} at the pin itself, untouched by the stack"
        out.append(f"{head}; {plural(py.files, 'patched Python file')} parse but {what}.")
    else:
        counted = py.failed if c.strict else py.by_stack
        bad = len({f.path for f in counted} | {m.path for m in py.conflict_markers})
        out.append(f"{head}; {bad:,} of {plural(py.files, 'patched Python file')} fail to parse.")
    if c.source_notes:
        out += ["", "Source notes:", "", *(f"- {escape(n)}" for n in c.source_notes)]
    if not c.patches_ok:
        lines = [line for p in c.patches if not p.ok for line in _patch_failure_lines(p)]
        out += ["", *_capped(lines, "failure")]
    if py is not None and not py.ok:
        lines = [
            f"- {code(f.path + (f':{f.line}' if f.line else ''))}: {escape(f.message)}"
            + escape(untouched_note(f.untouched, f.parses_with))
            for f in py.failed
        ] + [f"- {code(f'{m.path}:{m.line}')}: conflict marker {code(m.text)}" for m in py.conflict_markers]
        out += ["", f"Python {escape(py.version)} parse failures:", "", *_capped(lines, "file")]
    return out


_MARK = {"success": "✅", "skipped": "➖", "pending": "⏳", "failure": "❌"}


def _result(r: Result, *, on: str = "") -> str:
    url = safe_url(r.url) if r.url else None
    label = code(r.label)
    shown = f"[{label}]({url})" if url else label
    line = f"- {_MARK[r.state]} {shown}: {escape(r.raw)}"
    if r.description:
        line += f" ({escape(r.description)})"
    return line + (f" on {rev(r.sha[:8])}" if on else "")


def render_ci(e: CiEvidence | Skipped) -> list[str]:
    """The exact-head CI lines of the Validation section: the verdict, each context, and what
    ran on earlier heads, listed as not evidence."""
    if isinstance(e, Skipped):
        return [escape(e.reason)]
    head8 = e.sha[:8]
    what = f"PR #{e.pr} head " if e.pr is not None else ""
    line = f"Exact-head CI of {escape(e.repo)} at {what}{rev(head8)}: **{e.verdict}**"
    problems = []
    if e.failing:
        problems.append("failing " + ", ".join(code(r.label) for r in e.failing))
    if e.pending:
        problems.append("still running " + ", ".join(code(r.label) for r in e.pending))
    if e.missing:
        problems.append("never reported " + ", ".join(code(c) for c in e.missing))
    if not e.results:
        problems.append("no CI reported on this commit")
    out = [line + (f" ({'; '.join(problems)})" if problems else "") + "."]
    if e.required:
        out[0] += " Required: " + ", ".join(code(c) for c in e.required) + "."
    if e.results:
        out += ["", *_capped([_result(r) for r in e.results], "context")]
    if e.earlier:
        out += [
            "",
            f"Not evidence for {rev(head8)} (earlier commits of PR #{e.pr}):",
            "",
            *_capped([_result(r, on="earlier") for r in e.earlier], "result"),
        ]
    return out


def _ci_lines(report: SyncReport) -> list[str]:
    off = dict(report.gates_off)
    if isinstance(report.ci, Skipped) and "ci" in off:
        return [f"Exact-head CI: switched off ({escape(off['ci'])})."]
    return render_ci(report.ci)


MAX_FAILING_SHOWN = 10


def _image(digest: str) -> str:
    return f" (image {code(digest[:19] + '…')})" if digest else ""


def _run_line(r: RunRecord) -> str:
    line = f"- {escape(r.name)}: {run_phrase(r)}"
    if r.host:
        line += f" on {code(r.host)}"
    line += _image(r.image)
    if r.figures:
        line += " (" + ", ".join(f"{escape(k)} {escape(v)}" for k, v in r.figures) + ")"
    line += "."
    if r.note:
        line += f" {escape(r.note)}"
    return line


def _who(e: Evidence, records: tuple[AnyRecord, ...]) -> str:
    """Who claims each record: the committer of the records file's commit that added it, or the
    working tree (not committed yet)."""
    by: dict[str, list[str]] = {}
    for r in records:
        label = "pre-commit" if isinstance(r, PrecommitRecord) else r.name
        by.setdefault(e.committer(r) or "", []).append(escape(label))
    parts = [f"{', '.join(names)} committed by {escape(who)}" for who, names in by.items() if who]
    if "" in by:
        parts.append(f"{', '.join(by[''])} not committed yet (the working tree's claim)")
    return "; ".join(parts)


def _ci_line(c: CiRecord) -> str:
    """``- Buildkite #1445 passed 49 jobs; one agent-lost job passed on an unchanged retry.``"""
    where = "Buildkite " if c.source == "buildkite" else ""
    name = ci_phrase(c)  # numbers and fixed words only
    url = safe_url(c.url) if c.url else None
    if url is not None:
        name = name.replace(c.name, f"[{c.name}]({url})", 1)
    failing = f" Failing: {', '.join(code(f) for f in c.failing)}." if c.failing else ""
    return f"- {where}{name}.{failing}"


def _precommit_line(p: PrecommitRecord) -> str:
    """``- Changed-file pre-commit passes (4 hooks; 150 files).`` or the hooks that failed."""
    line = f"- {precommit_phrase(p)}."
    if p.failed:
        shown = [code(h.id) + (f" (exit {h.exit})" if h.exit is not None else "") for h in p.failed]
        line += f" Failed: {', '.join(shown[:MAX_FAILING_SHOWN])}"
        line += f" and {len(shown) - MAX_FAILING_SHOWN:,} more." if len(shown) > MAX_FAILING_SHOWN else "."
        first = next((h for h in p.failed if h.output), None)
        if first is not None:
            line += f" {code(first.id)} printed: {code(first.output[:200])}."
    return line


def _regress_line(r: RegressRecord) -> list[str]:
    """``- Regression matrix: 6 failed, 2 passed before (4c193f1f); 8 passed after.`` and the cases
    that prove nothing, are new or still fail."""
    phrase = regress_phrase(r).replace(" before;", f" before ({rev(r.before[:8])});", 1)
    out = [f"- {escape(r.name[:1].upper() + r.name[1:])}: {phrase}."]
    for what, ids in (
        ("Pass before and after (do not prove the fix)", r.not_proving),
        ("Not present before", r.not_present_before),
        ("Not passing after", r.failing_after),
    ):
        if ids:
            shown = ", ".join(code(i) for i in ids[:MAX_FAILING_SHOWN])
            more = f" and {len(ids) - MAX_FAILING_SHOWN:,} more" if len(ids) > MAX_FAILING_SHOWN else ""
            out.append(f"  - {what}: {shown}{more}.")
    return out


def render_evidence(e: Evidence) -> list[str]:
    """The recorded tests and runs at the evidence head, then those that are not evidence for it."""
    head8 = e.head[:8]
    tests, runs, ci, pre, matrices = e.tests, e.runs, e.ci, e.precommit, e.regress
    out: list[str] = []
    if tests or runs or ci or pre or matrices:
        bound = "" if e.evidence_head == e.head else f" (recorded at {rev(e.evidence_head[:8])})"
        out += [f"Recorded evidence for {rev(head8)}{bound}:", ""]
        if tests:
            out.append(
                "- "
                + "; ".join(f"{escape(t.suite)}: {tests_phrase(t)}{_image(t.image)}" for t in tests)
                + "."
            )
        for t in tests:
            if t.failing:
                shown = ", ".join(code(f) for f in t.failing[:MAX_FAILING_SHOWN])
                more = t.failed + t.errors - min(len(t.failing), MAX_FAILING_SHOWN)
                out.append(
                    f"- Failing in {escape(t.suite)}: {shown}"
                    + (f" and {more:,} more" if more > 0 else "")
                    + "."
                )
        out += [_run_line(r) for r in runs]
        out += [_ci_line(c) for c in ci]
        out += [_precommit_line(p) for p in pre]
        out += [line for r in matrices for line in _regress_line(r)]
        every: tuple[AnyRecord, ...] = (*tests, *runs, *ci, *pre, *matrices)
        out.append(f"- Recorded in {code(f'sop/records/{e.sync}.toml')}: {_who(e, every)}.")
    else:
        out.append(f"No tests or runs are recorded for {rev(head8)} ({code(f'sop/records/{e.sync}.toml')}).")
    others = e.not_evidence
    if others:
        lines = []
        for rec in others[:MAX_LIST]:
            if isinstance(rec, CiRecord):
                lines.append(f"- {ci_phrase(rec)} at {rev(rec.sha[:8])}, not evidence of final-head green.")
                continue
            if isinstance(rec, PrecommitRecord):
                lines.append(f"- {precommit_phrase(rec)} at {rev(rec.sha[:8])}.")
                continue
            if isinstance(rec, RegressRecord):
                what = regress_phrase(rec)
            else:
                what = tests_phrase(rec) if isinstance(rec, TestRecord) else run_phrase(rec)
            lines.append(f"- {escape(rec.name)} at {rev(rec.sha[:8])}: {what}.")
        if len(others) > MAX_LIST:
            lines.append(f"- … and {plural(len(others) - MAX_LIST, 'more record')}")
        out += ["", f"Not evidence for {rev(head8)} (recorded at other heads):", "", *lines]
    return out


_GATE_MARK = {"held": "✓", "failed": "✗", "not checked": "?", "off": "–"}


def render_gates(gates: Sequence[Gate]) -> list[str]:
    """The merge gates the report covers, each with its state (and what moves an unmet one)."""
    out = ["Merge gates (the report exits 0 only when every one holds):", ""]
    for g in gates:
        line = f"- {_GATE_MARK[g.state]} **{g.name}**: {g.state} — {escape(g.detail)}"
        if g.command:
            line += f" (next: {code(g.command)})"
        out.append(line)
    return out


def render_markdown(report: SyncReport) -> str:
    """The whole report: four ``##`` sections, LF line endings, one trailing newline; @mentions
    neutralised (``<code>@name</code>``) and the publish markers' text made inert."""
    blocks = [
        render_summary(report.summary),
        render_engines(report.engines),
        render_audit(report.audit, report.upstream_name),
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
    return neutralize_markers(neutralize_mentions(text))
