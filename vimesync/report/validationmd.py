"""The Validation section's first lines in Markdown: whether the stack applies to the pin and the
patched Python parses, then each failed hunk (where it stopped matching) and parse failure."""

from __future__ import annotations

from collections.abc import Sequence

from vimesync.check.model import CheckReport
from vimesync.patches.model import HunkFailure, PatchResult
from vimesync.report.enginemd import shown_source
from vimesync.report.mdtext import _capped, code, escape, rev
from vimesync.report.model import Skipped
from vimesync.text import plural, untouched_note


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
