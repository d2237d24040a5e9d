"""What the report says ran at the head, in Markdown: the exact-head CI (each context, and what
ran on earlier heads, listed as not evidence) and the recorded evidence (tests, runs, CI builds,
pre-commit, regression matrices) with who claims it. The phrases are :mod:`vimesync.report.evidence`'s."""

from __future__ import annotations

from vimesync.ci.verdict import CiEvidence, Result
from vimesync.report.evidence import (
    independent_phrase,
    measured_image,
    provenance,
    run_facts,
    run_phrase,
    tests_phrase,
)
from vimesync.report.mdtext import MAX_LIST, _capped, code, escape, rev, safe_url
from vimesync.report.model import Skipped
from vimesync.sop.cirecords import CiRecord, ci_phrase
from vimesync.sop.precommit import PrecommitRecord, precommit_phrase
from vimesync.sop.regress import RegressRecord, regress_phrase
from vimesync.sop.results import AnyRecord, Evidence, RunRecord, TestRecord
from vimesync.text import plural

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


MAX_FAILING_SHOWN = 10


def _image(digest: str) -> str:
    return f" (image {code(digest[:19] + '…')})" if digest else ""


def _run_line(r: RunRecord, label: str = "") -> str:
    """``- PipelineRL: exit 0 in 4m03s, measured on `h200-01` (Linux 6.8.0, 224 CPUs).`` or, typed,
    ``- PipelineRL: exit 0 in 4m03s on `h200-01`, typed.``"""
    line = f"- {label or escape(r.name)}: {run_phrase(r)}"
    m = r.measured
    if m is not None:
        line += f", measured on {code(m.host)}"
        facts = run_facts(r)
        line += f" ({escape(facts)})" if facts else ""
        image, said = measured_image(r)
        line += f", in image {code(image)}{escape(said)}" if image else ""
        if m.tests is not None:
            passed, failed, errors, skipped = m.tests
            line += "; JUnit: " + tests_phrase(TestRecord("", "", passed, failed, errors, skipped))
    else:
        line += (f" on {code(r.host)}" if r.host else "") + ", typed"
    line += _image(r.image)
    figures = (*r.figures, *(m.figures if m is not None else ()))
    if figures:
        line += "; " + ", ".join(f"{escape(k)} {escape(v)}" for k, v in figures)
    line += "."
    if r.note:
        line += f" {escape(r.note)}"
    return line


def _run_lines(runs: tuple[RunRecord, ...]) -> list[str]:
    """One line a run; several independent runs of one name (``--again``) under one line that
    sums them up: ``- PipelineRL: two independent complete runs, both exit 0, 4m03s and 4m10s.``"""
    by_name: dict[str, list[RunRecord]] = {}
    for r in runs:
        by_name.setdefault(r.name, []).append(r)
    out: list[str] = []
    for name, group in by_name.items():
        if len(group) == 1:
            out.append(_run_line(group[0]))
            continue
        out.append(f"- {escape(name)}: {independent_phrase(group)}.")
        out += ["  " + _run_line(r, f"run {r.run}") for r in sorted(group, key=lambda r: r.run)]
    return out


def _who(e: Evidence, records: tuple[AnyRecord, ...]) -> str:
    """Who claims each record: the committer of the records file's commit that added it, or the
    working tree (not committed yet)."""
    by: dict[str, list[str]] = {}
    for r in records:
        label = "pre-commit" if isinstance(r, PrecommitRecord) else r.name
        names = by.setdefault(e.committer(r) or "", [])
        if escape(label) not in names:  # several runs of one name (--again): named once
            names.append(escape(label))
    parts = [f"{', '.join(names)} committed by {escape(who)}" for who, names in by.items() if who]
    if "" in by:
        parts.append(f"{', '.join(by[''])} not committed yet (the working tree's claim)")
    return "; ".join(parts)


def _ci_line(c: CiRecord) -> str:
    """``- Buildkite #1445 passed 49 jobs; one agent-lost job passed on an unchanged retry.``"""
    where = "Buildkite " if c.source == "buildkite" else ""
    name = ci_phrase(c, escape)  # numbers, fixed words and the groups' names escaped
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
        out += _run_lines(runs)
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
                what = (
                    tests_phrase(rec)
                    if isinstance(rec, TestRecord)
                    else f"{run_phrase(rec)}, {provenance(rec)}"
                )
            lines.append(f"- {escape(rec.name)} at {rev(rec.sha[:8])}: {what}.")
        if len(others) > MAX_LIST:
            lines.append(f"- … and {plural(len(others) - MAX_LIST, 'more record')}")
        out += ["", f"Not evidence for {rev(head8)} (recorded at other heads):", "", *lines]
    return out
