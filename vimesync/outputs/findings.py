"""``patches check``, ``patches lint``, ``audit``, ``report``, ``walk``, ``carry``, ``pin bump`` and
``ci`` results as :class:`Findings`.

Annotations point where a maintainer fixes things: a failing hunk at its ``@@`` line in the patch
file (relative to the checkout), a syntax error at its line in the patched engine file (a path
of the engine, not of the checkout: GitHub shows it on the run), an unreviewed path at the path."""

from __future__ import annotations

import os
from pathlib import Path

from vimesync.audit.model import AuditResult
from vimesync.check.bump import BumpReport
from vimesync.check.model import CheckReport
from vimesync.ci.verdict import CiEvidence
from vimesync.ci.verdict import Result as CiResult
from vimesync.lint.model import LintResult
from vimesync.outputs.model import Annotation, Case, Findings, Suite
from vimesync.patches.model import HunkFailure, PatchResult
from vimesync.report.auditmd import render_audit
from vimesync.report.validationmd import render_validation
from vimesync.sop.gates import Gate
from vimesync.text import plural, untouched_note
from vimesync.upstream.model import WalkResult


def checkout_relative(path: Path | str, root: Path | None = None) -> str:
    """``path`` relative to ``root`` (default: the working folder, the checkout in CI) when it
    lies inside, else as given; "/"-separated, as GitHub wants a file property."""
    base = os.path.abspath(root or Path.cwd())
    full = os.path.abspath(path)
    if full == base or full.startswith(base.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(full, base)).as_posix()
    return Path(path).as_posix()


def _hunk_text(f: HunkFailure) -> str:
    where = f"{f.file}: hunk #{f.hunk} ({f.header.strip()})" if f.hunk else f.file or "the patch"
    text = f"{where}: {f.reason}" if not f.reason.startswith(f.file or "\0") else f.reason
    if f.first_mismatch is not None:
        at = f"line {f.mismatch_line}" if f.mismatch_line else f"hunk line {f.first_mismatch}"
        text += f"\n  {at} expected: {f.expected!r}\n  found: {f.found!r}"
    if f.nearest_line is not None:
        text += f"\n  closest match starts at line {f.nearest_line}"
    return text


def _patch_case(p: PatchResult, engine: str, patch_file: str) -> Case:
    classname = f"patches check.{engine}"
    if p.skipped:
        return Case(p.name, classname, skipped="not applied: an earlier patch failed", file=patch_file)
    if p.ok:
        return Case(p.name, classname, file=patch_file)
    first = p.failures[0] if p.failures else None
    message = f"{plural(len(p.failures), 'failing hunk')}" + (
        f"; first: {first.file} hunk #{first.hunk}" if first and first.hunk else ""
    )
    detail = "\n".join(_hunk_text(f) for f in p.failures) or "failed"
    return Case(
        p.name,
        classname,
        failure=message,
        detail=detail,
        file=patch_file,
        line=first.patch_line if first else None,
    )


def check_findings(report: CheckReport, *, root: Path | None = None) -> Findings:
    """One case per patch (its failing hunks as the failure), one per Python file that does not
    parse or keeps a conflict marker (plus one for the parse as a whole); an annotation per
    failing hunk and per syntax error; the Validation section as the summary."""
    # The series names a file, or the folder holding ``series`` (read already, so no symlink).
    series_dir = Path(report.series) if os.path.isdir(report.series) else Path(report.series).parent
    cases: list[Case] = []
    notes: list[Annotation] = []
    for p in report.patches:
        patch_file = checkout_relative(series_dir / p.name, root)
        cases.append(_patch_case(p, report.engine, patch_file))
        for f in p.failures:
            what = f"hunk #{f.hunk}" if f.hunk else "file"
            notes.append(
                Annotation(
                    "error",
                    f"{p.name}: {what} of {f.file or 'the patch'} does not apply",
                    _hunk_text(f),
                    file=patch_file,
                    line=f.patch_line,
                )
            )
    py = report.python
    classname = f"python parse.{report.engine}"
    if py is None:
        cases.append(
            Case("parse the patched tree", classname, skipped="not reached: the stack did not apply")
        )
    else:
        counted = py.failed if report.strict else py.by_stack
        unparsable = len({f.path for f in counted} | {m.path for m in py.conflict_markers})
        cases.append(
            Case(
                f"parse {plural(py.files, 'Python file')} ({py.version} grammar)",
                classname,
                failure=None if report.parse_ok else f"{plural(unparsable, 'file')} do not parse",
            )
        )
        for bad in py.failed:
            if bad.untouched and not report.strict:  # the pin's own failure: shown, not failing
                why = untouched_note(True, bad.parses_with).strip(" ()")
                cases.append(Case(bad.path, classname, skipped=f"{bad.message} ({why})", file=bad.path))
                title = "fails at the pin itself"
                notes.append(Annotation("warning", title, bad.message, file=bad.path, line=bad.line))
                continue
            cases.append(Case(bad.path, classname, failure=bad.message, file=bad.path, line=bad.line))
            notes.append(
                Annotation(
                    "error",
                    f"Python {py.version} syntax error in the patched {report.engine} tree",
                    bad.message,
                    file=bad.path,
                    line=bad.line,
                    col=bad.column,
                )
            )
        for m in py.conflict_markers:
            message = f"leftover conflict marker {m.text!r}"
            cases.append(Case(f"{m.path}:{m.line}", classname, failure=message, file=m.path, line=m.line))
            notes.append(
                Annotation(
                    "error", f"conflict marker in the patched {report.engine} tree", message, m.path, m.line
                )
            )
    suite = Suite(f"patches check: {report.engine}", tuple(cases))
    summary = "\n".join(render_validation(report)).replace(
        "## Validation", f"## {_md(report.engine)} patch stack", 1
    )
    return Findings((suite,), tuple(notes), summary + "\n")


def _md(text: str) -> str:
    from vimesync.report.mdtext import escape

    return escape(text)


def audit_findings(
    result: AuditResult, *, upstream_name: str = "upstream", downstream_name: str = ""
) -> Findings:
    """One case per changed path (failing when unreviewed or stale), an annotation per such path."""
    cases: list[Case] = []
    notes: list[Annotation] = []
    for p in result.paths:
        classname = f"audit.{p.cls}"
        if p.ok:
            cases.append(Case(p.path, classname, file=p.path))
            continue
        why = (
            "changed since its review"
            if p.review == "stale"
            else f"{p.cls} path not reviewed for sync {result.sync}"
        )
        cases.append(Case(p.path, classname, failure=why, file=p.path))
        notes.append(
            Annotation(
                "error",
                f"{p.review} path ({p.cls})",
                f"{why}: review it against the upstream tip and the baseline, then run "
                f"vimesync audit review PATH --by NAME (ledger {result.ledger_path})",
                file=p.path,
            )
        )
    for v in result.violations:
        # A verification rule broken at the head: the file and line (0: the whole file).
        line = v.line or None
        if v.must == "match":
            why = f"{v.where}: no match of {v.pattern} in the file"
        else:
            why = f"{v.where}: {v.pattern} must not match: {v.text}"
        cases.append(Case(f"{v.path}:{v.line}", "audit.verify", failure=why, file=v.path, line=line))
        notes.append(Annotation("error", "verification rule broken", why, file=v.path, line=line))
    suite = Suite(f"audit: {result.sync}", tuple(cases))
    return Findings(
        (suite,), tuple(notes), "\n".join(render_audit(result, upstream_name, downstream_name)) + "\n"
    )


def gate_findings(gates: tuple[Gate, ...], *, summary: str = "") -> Findings:
    """One case per gate of the report: held passes, failed, pending or not checked fails,
    switched off skips, blocked skips with a warning."""
    cases = []
    notes = []
    for g in gates:
        if g.state == "held":
            cases.append(Case(g.name, "sync gates", file=None))
        elif g.state == "off":
            cases.append(Case(g.name, "sync gates", skipped=g.detail or "switched off"))
        elif g.state == "blocked":  # lets the sync go on, and is said so
            cases.append(Case(g.name, "sync gates", skipped=f"blocked: {g.detail}"))
            notes.append(Annotation("warning", f"sync gate {g.name}: blocked", g.detail))
        else:
            cases.append(Case(g.name, "sync gates", failure=f"{g.state}: {g.detail}"))
            notes.append(Annotation("error", f"sync gate {g.name}: {g.state}", g.detail))
    return Findings((Suite("sync gates", tuple(cases)),), tuple(notes), summary)


def lint_findings(results: list[LintResult] | tuple[LintResult, ...]) -> Findings:
    """One suite per series: a failing case per finding (``CODE path:line``), a passing case when
    the series is clean; an annotation per finding at its line; the findings as the summary."""
    suites: list[Suite] = []
    notes: list[Annotation] = []
    lines: list[str] = []
    for r in results:
        cases: list[Case] = []
        for f in r.findings:
            path = checkout_relative(f.path)
            cases.append(
                Case(f"{f.code} {path}:{f.line}", f"lint.{f.code}", failure=f.message, file=path, line=f.line)
            )
            notes.append(
                Annotation("error", f"{f.code} (vimesync patches lint)", f.message, file=path, line=f.line)
            )
            lines.append(f"- `{f.code}` {_md(path)}:{f.line}: {_md(f.message)}")
        if not r.findings:
            cases.append(Case(f"lint {plural(r.patches, 'patch', 'patches')}", "lint"))
        suites.append(Suite(f"patches lint: {checkout_relative(r.series)}", tuple(cases)))
    found = sum(len(r.findings) for r in results)
    head = "## Patch lint\n\n" + (f"{plural(found, 'finding')}:\n\n" if found else "No findings.\n")
    return Findings(tuple(suites), tuple(notes), head + "\n".join(lines) + ("\n" if lines else ""))


def walk_findings(result: WalkResult) -> Findings:
    """One case per PR of the range, none failing: a walk classifies, it checks nothing. An
    applicable PR not carried yet is the work ahead, not a failure (``carry`` says what fails);
    an excluded or mirrored PR is a skipped case with its reason. No annotation: a PR has no
    file:line in the checkout to point to."""
    from vimesync.upstream.model import APPLICABLE

    cases = []
    for pr in result.prs:
        d = pr.decision
        status = d.status if d else APPLICABLE
        name = f"#{pr.number} {pr.title}"
        reason = (d.reason if d else "") or status
        cases.append(Case(name, "walk", skipped=None if status == APPLICABLE else f"{status}: {reason}"))
    suite = Suite(f"walk: {result.base[:12]}..{result.tip[:12]}", tuple(cases))
    counts = f"{plural(len(result.prs), 'PR')}, {plural(len(result.direct_commits), 'direct commit')}"
    return Findings(
        (suite,), (), f"## Upstream walk\n\n{_md(counts)} in {result.base[:12]}..{result.tip[:12]}.\n"
    )


def ci_findings(e: CiEvidence) -> Findings:
    """One case per required context (failing unless it succeeded or was skipped: missing, pending
    and failed are not green), then one per other context reported on the head (they count in
    the verdict too). No annotation: a CI context has no file:line in the checkout."""
    classname = f"ci.{e.repo}"
    by_name = {alias: r for r in e.results for alias in r.aliases}
    cases: list[Case] = []
    seen: set[CiResult] = set()
    for name in e.required:
        r = by_name.get(name)
        if r is None:
            cases.append(Case(name, classname, failure=f"required, never reported on {e.sha[:12]}"))
            continue
        seen.add(r)
        cases.append(_ci_case(r, classname))
    cases += [_ci_case(r, classname) for r in e.results if r not in seen]
    summary = f"## CI at {e.sha[:12]}\n\n{_md(e.repo)}: {e.verdict}.\n"
    return Findings((Suite(f"ci: {e.repo} at {e.sha[:12]}", tuple(cases)),), (), summary)


def _ci_case(r: CiResult, classname: str) -> Case:
    if r.state == "success":
        return Case(r.label, classname)
    if r.state == "skipped":
        return Case(r.label, classname, skipped=r.raw)
    detail = " — ".join(x for x in (r.description, r.url) if x)
    return Case(r.label, classname, failure=f"{r.state}: {r.raw}", detail=detail)


def bump_findings(report: BumpReport, *, root: Path | None = None) -> Findings:
    """One case per patch at the new pin: a conflict (a hunk that does not apply, or with
    --refresh one it could not merge) fails, one already applied there is skipped (drop it); one
    case for the parse of the new tree. An annotation per failing hunk at its line in the patch."""
    from vimesync.check.bump import label

    new = label(report.new)
    classname = f"pin bump.{report.engine}"
    series_dir = Path(report.series) if os.path.isdir(report.series) else Path(report.series).parent
    conflicts = {p.name for p in report.conflicts}
    cases: list[Case] = []
    notes: list[Annotation] = []
    for p in report.patches:
        patch_file = checkout_relative(series_dir / p.name, root)
        if p.name in conflicts:
            why = p.refresh.why if p.refresh is not None else f"{plural(len(p.new.failures), 'failing hunk')}"
            detail = "\n".join(_hunk_text(f) for f in p.new.failures)
            cases.append(Case(p.name, classname, failure=f"conflicts at {new}: {why}", detail=detail))
            for f in p.new.failures:
                if f.patch_line is not None:
                    notes.append(
                        Annotation(
                            "error",
                            f"{p.name}: does not apply at {new}",
                            _hunk_text(f),
                            file=patch_file,
                            line=f.patch_line,
                        )
                    )
        elif p.new.status == "already-applied":
            cases.append(Case(p.name, classname, skipped=f"already applied at {new}: drop it"))
        else:
            cases.append(Case(p.name, classname, file=patch_file))
    py = report.new_python
    if py is not None:
        failure = (
            None if py.ok else f"{plural(len(py.failed) + len(py.conflict_markers), 'file')} do not parse"
        )
        cases.append(Case(f"parse at {new}", f"python parse.{report.engine}", failure=failure))
    suite = Suite(f"pin bump: {report.engine} to {new}", tuple(cases))
    verdict = "ready" if report.ok else f"{plural(len(report.conflicts), 'patch', 'patches')} conflict"
    return Findings(
        (suite,), tuple(notes), f"## Pin bump of {_md(report.engine)}\n\n{_md(new)}: {verdict}.\n"
    )
