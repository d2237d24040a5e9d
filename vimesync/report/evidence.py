"""The recorded tests and runs of the Validation section, in the voice of a sync PR::

    - CPU regressions: 292 passed; baked runtime image checks: 175 passed.
    - PipelineRL four-GPU: exit 0 in 4m03s on h200-01 (rollouts 3, flush interval 2).
    - Recorded in `sop/records/4c193f1f..8c17b676.toml`, committed by Alice <alice@example.com>.

    Not evidence for f32a36f1 (recorded at other heads):

    - CPU regressions at 3f48e09f: 290 passed, 2 failed.

Every name, figure, note and committer comes from a file a pull request can edit: escaped here."""

from __future__ import annotations

from vimesync.report.markdown import MAX_LIST, code, escape, rev
from vimesync.sop.results import Evidence, RunRecord, TestRecord, format_duration
from vimesync.text import plural

MAX_FAILING_SHOWN = 10


def tests_phrase(t: TestRecord) -> str:
    """``292 passed`` or ``290 passed, 2 failed, 1 error, 3 skipped`` (numbers only)."""
    parts = [f"{t.passed:,} passed"]
    if t.failed:
        parts.append(f"{t.failed:,} failed")
    if t.errors:
        parts.append(plural(t.errors, "error"))
    if t.skipped:
        parts.append(f"{t.skipped:,} skipped")
    return ", ".join(parts)


def run_phrase(r: RunRecord) -> str:
    """``exit 0 in 4m03s`` (numbers only)."""
    return f"exit {r.exit}" + (f" in {format_duration(r.duration)}" if r.duration is not None else "")


def describe_record(rec: TestRecord | RunRecord) -> str:
    """One plain line (the CLI's; the caller escapes it for its output)."""
    if isinstance(rec, TestRecord):
        return tests_phrase(rec)
    extra = [f"{k} {v}" for k, v in rec.figures]
    host = f" on {rec.host}" if rec.host else ""
    return run_phrase(rec) + host + (f" ({', '.join(extra)})" if extra else "")


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


def _who(e: Evidence, records: tuple[TestRecord | RunRecord, ...]) -> str:
    """Who claims these records: the committers of the records file, or the working tree."""
    names = dict.fromkeys(e.committer(r) or "" for r in records)
    committed = [escape(n) for n in names if n]
    parts = []
    if committed:
        parts.append("committed by " + ", ".join(committed))
    if "" in names:
        parts.append("not committed yet (the working tree's claim)")
    return " and ".join(parts)


def render_evidence(e: Evidence) -> list[str]:
    """The recorded tests and runs at the evidence head, then those that are not evidence for it."""
    head8 = e.head[:8]
    tests, runs = e.tests, e.runs
    out: list[str] = []
    if tests or runs:
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
        out.append(f"- Recorded in {code(f'sop/records/{e.sync}.toml')}, {_who(e, (*tests, *runs))}.")
    else:
        out.append(f"No tests or runs are recorded for {rev(head8)} ({code(f'sop/records/{e.sync}.toml')}).")
    others = e.not_evidence
    if others:
        lines = []
        for rec in others[:MAX_LIST]:
            what = tests_phrase(rec) if isinstance(rec, TestRecord) else run_phrase(rec)
            lines.append(f"- {escape(rec.name)} at {rev(rec.sha[:8])}: {what}.")
        if len(others) > MAX_LIST:
            lines.append(f"- … and {plural(len(others) - MAX_LIST, 'more record')}")
        out += ["", f"Not evidence for {rev(head8)} (recorded at other heads):", "", *lines]
    return out
