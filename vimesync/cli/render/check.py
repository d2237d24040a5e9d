"""``patches check`` as text: per engine, a table of the patches, the failures to the hunk, the
parse verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import agree, of_total, plural, untouched_note

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from vimesync.app.check import CheckOutcome
    from vimesync.check.model import CheckReport
    from vimesync.patches.model import PatchResult


def render_check(outcome: CheckOutcome) -> None:
    """Every engine's report, a blank line between them; where --export wrote the tree."""
    for i, report in enumerate(outcome.reports):
        if i:
            output.stdout.print()
        render(report)
    if outcome.export is not None:
        left = any(
            r.mode.applier == "gnu-patch" and p.touched and not p.ok
            for r in outcome.reports
            for p in r.patches
        )
        # GNU patch writes what applied of a failed patch (.rej files aside), and so did the tree
        how = " as GNU patch leaves it (the failed patch's hunks that applied are in it)" if left else ""
        output.stderr.print(output.styled(f"exported the patched tree to {outcome.export}{how}"))


# Every string below that comes from the source, the series or a patch goes through
# output.styled: shown as text (control characters escaped), never read as rich markup.


def render(report: CheckReport) -> None:
    """Human output: a table per patch, then offsets and failures to the hunk, then the parse verdict."""
    con = output.stdout
    src = report.source
    at = f" @ {src.rev}" if src.rev else ""
    exact = "" if report.exact_pin or src.kind == "directory" else " (no digest pinned: not an exact pin)"
    con.print(output.styled((report.engine, "bold"), f" source: {src.kind} {src.path}{at}{exact}"))
    for note in report.source_notes:
        con.print(output.styled((f"  note: {note}", "dim")))
    mode = report.mode
    if mode.applier == "gnu-patch":
        forward = " --forward" if mode.forward else ""
        how = f"  applied as GNU patch does: patch -p1 --fuzz={mode.fuzz}{forward}"
        con.print(output.styled((how, "dim")))
    if report.patches:
        con.print(_table(report))
    else:
        con.print(output.styled("The series is empty: no patches to apply."))
    for p in report.patches:
        _render_patch_details(p)
    _render_python(report)
    con.print(_verdict(report))


def _table(report: CheckReport) -> Table:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name, justify in (
        ("#", "right"),
        ("Patch", "left"),
        ("Result", "left"),
        ("Files", "right"),
        ("Hunks", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for i, p in enumerate(report.patches, 1):
        verdict = output.styled((status_text(p), _STYLE[p.status]))
        if p.upstreamed:
            verdict.append(f", upstreamed at {p.upstreamed[:12]}", style="cyan")
        table.add_row(str(i), output.styled(p.name), verdict, str(p.files), str(p.hunks))
    return table


_STYLE = {
    "skipped": "dim",
    "failed": "bold red",
    "partly-applied": "bold red",
    "already-applied": "bold magenta",
    "offsets": "yellow",
    "applied": "green",
}


def status_text(p: PatchResult) -> str:
    """A patch's verdict in a few words (plain text: the caller styles it)."""
    if p.status == "failed":
        return "FAILED"
    if p.status == "offsets":
        fuzzed = f" ({len(p.fuzzed)} with fuzz)" if p.fuzzed else ""
        return f"applied, {plural(len(p.offsets), 'hunk')} at an offset{fuzzed}"
    if p.status == "already-applied":
        return "already applied"
    if p.status == "partly-applied":
        return f"FAILED, partly applied ({of_total(len(p.already_applied), p.hunks, 'hunk')})"
    return p.status


def _render_patch_details(p: PatchResult) -> None:
    from vimesync.check.model import drift_note

    con = output.stdout
    if p.status == "already-applied":
        con.print(
            output.styled(
                (f"  {p.name}: already applied", "magenta"),
                f" (all of its {plural(p.hunks, 'hunk')} apply in reverse): drop it from the series",
            )
        )
        return
    for o in p.offsets:
        if o.fuzz:  # GNU patch ignored context lines to place it: worth a look
            text = f"{o.file}: hunk #{o.hunk} applied with fuzz {o.fuzz} at offset {o.offset:+d}"
            con.print(output.styled((f"  {p.name}: warning: {text}", "yellow")))
        else:
            con.print(output.styled(f"  {p.name}: {o.file} hunk #{o.hunk} applied at offset {o.offset:+d}"))
    drift = {d.file: d for d in p.drift}
    done = set(p.already_applied)
    for f in p.failures:
        d = drift.pop(f.file, None)
        if d is not None:  # first, before the file's first failure: it says why its hunks fail
            con.print(output.styled((f"  {p.name}: note: {drift_note(d)}", "yellow")))
        if (f.file, f.hunk) in done:
            con.print(
                output.styled(
                    (f"  {p.name}: {f.file}: hunk #{f.hunk} ({f.header}): already applied", "magenta")
                )
            )
            continue
        if f.hunk:
            text = f"{f.file}: hunk #{f.hunk} ({f.header}): {f.reason}"
        else:  # file-level reasons usually start with the path already
            text = f.reason if f.reason.startswith(f.file) else f"{f.file}: {f.reason}"
        con.print(output.styled((f"  {p.name}: {text}", "red")))
        if f.first_mismatch is not None:
            at = (
                f"line {f.mismatch_line} (hunk line {f.first_mismatch})"
                if f.mismatch_line
                else f"hunk line {f.first_mismatch}"
            )
            con.print(output.styled(f"    {at} expected: {f.expected!r}"))
            con.print(output.styled(f"    {'':>{len(at)}} found:    {f.found!r}"))
        if f.nearest_line is not None:
            matched = getattr(f, "nearest_matched", None)
            extent = f", {matched} of the hunk's context/removed lines match there" if matched else ""
            con.print(output.styled(f"    closest match starts at line {f.nearest_line}{extent}"))
    missing = [f for f in p.failures if f.missing]
    if missing and len(missing) == len(p.failures) == p.files:
        con.print(
            output.styled(
                "    ",
                ("hint:", "yellow"),
                " none of the files this patch names exist in the source: check --strip (-pN)",
            )
        )


def _render_python(report: CheckReport) -> None:
    con = output.stdout
    py = report.python
    if py is None:
        con.print(
            output.styled(
                ("Python files not parsed: the stack did not apply (--keep-going parses anyway).", "dim")
            )
        )
        return
    cached = f", {py.cached:,} from cache" if py.cached else ""
    how = f"{py.version_source}; {py.interpreter}{cached}"
    con.print(
        output.styled(f"Parsed {plural(py.files, 'Python file')} with the {py.version} grammar ({how}).")
    )
    for bad in py.failed:
        line = f":{bad.line}" if bad.line else ""
        note = untouched_note(bad.untouched, bad.parses_with)
        con.print(output.styled((f"  {bad.path}{line}: {bad.message}", "red"), (note, "yellow")))
    for c in py.conflict_markers:
        con.print(output.styled((f"  {c.path}:{c.line}: leftover conflict marker {c.text!r}", "red")))


def _at_pin(report: CheckReport) -> str:
    """ "; 1 file fails at the pin itself (...)" when the pinned source has files that do not parse
    untouched by the stack: counted apart, failing the check only under --strict."""
    py = report.python
    if py is None or not py.at_pin:
        return ""
    n = len(py.at_pin)
    verb = "fails" if n == 1 else "fail"
    how = "--strict counts it" if n == 1 else "--strict counts them"
    if report.strict:
        how = "failing under --strict"
    return f"; {plural(n, 'file')} {verb} at the pin itself (untouched by the stack; {how})"


def _verdict(report: CheckReport) -> Text:
    """The last line: what passed, or everything that failed, counted."""
    n = len(report.patches)
    to = "the exact pin" if report.source.kind == "git" else "the source"
    py = report.python
    applied = len(report.already_applied)
    drop = "drop it from the series" if applied == 1 else "drop them from the series"
    at_pin = _at_pin(report)
    if report.ok and py is not None and applied:  # --keep-going: noted, not failing
        are = agree(applied, "is", "are")
        done = f"{of_total(applied, n, 'patch', 'patches')} {are} already applied in {to}: {drop}"
        return output.styled(("OK", "bold green"), f": {done}; the others apply{at_pin}.")
    if report.ok and py is not None:
        patches = "the only patch applies" if n == 1 else f"all {n} patches apply sequentially"
        if n == 0:
            files = f"{plural(py.files, 'Python file')} of {to} {'parses' if py.files == 1 else 'parse'}"
            return output.styled(("OK", "bold green"), f": the series is empty, nothing to apply; {files}.")
        parsed = plural(py.files, "patched Python file") + (" parses" if py.files == 1 else " parse")
        if py.at_pin:
            parsed = f"the stack's files parse{at_pin}"
        return output.styled(("OK", "bold green"), f": {patches} to {to}; {parsed}.")
    problems = []
    failed = sum(1 for p in report.patches if p.status in ("failed", "partly-applied"))
    skipped = sum(1 for p in report.patches if p.skipped)
    if applied:
        problems.append(f"{of_total(applied, n, 'patch', 'patches')} already applied in {to}: {drop}")
    if failed:
        problems.append(f"{of_total(failed, n, 'patch', 'patches')} failed to apply to {to}")
    if skipped:
        problems.append(f"{skipped} not applied after a failure")
    if report.strict and report.fuzzed:
        problems.append(f"{plural(report.fuzzed, 'hunk')} applied only with fuzz (--strict)")
    counted = () if py is None else py.failed if report.strict else py.by_stack
    if counted:
        verb = "does" if len(counted) == 1 else "do"
        problems.append(f"{plural(len(counted), 'Python file')} {verb} not parse")
    if py is not None and py.at_pin and not report.strict:
        problems.append(_at_pin(report).removeprefix("; "))
    if py is not None and py.conflict_markers:
        problems.append(plural(len(py.conflict_markers), "leftover conflict marker"))
    return output.styled(("FAILED", "bold red"), ": " + "; ".join(problems) + ".")
