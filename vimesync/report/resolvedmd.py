"""The Summary's account of the conflicts a carry resolved by hand: per carried PR, each resolved
file and the upstream lines the committed file does not hold, in fenced code blocks no line of
upstream content can close (a longer fence than any backtick run it holds).

Bounded for a PR description (GitHub keeps 65,536 characters): at most MAX_PRS PRs, MAX_FILES
files per PR and MAX_LINES lines in all are shown; once the lines are shown, each later PR gets
one line naming its files; what is left out is counted (the JSON report holds every line kept).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vimesync.carry.resolutions import EDITED, EDITED_OUTSIDE, Resolution, ResolvedFile
from vimesync.report.mdtext import code, escape, link
from vimesync.report.model import PrLine, Summary
from vimesync.text import of_total, plural

MAX_PRS = 30
MAX_FILES = 10  # per PR
MAX_LINES = 120  # dropped lines shown in all (each file: at most carry.resolutions.MAX_LINES)
BRIEF_FILES = 5  # files named per PR once MAX_LINES are shown

_TICKS = re.compile(r"`+")


def fenced(lines: Sequence[str], info: str = "") -> list[str]:
    """``lines`` (one line each, control characters already escaped) as a fenced code block: the
    fence is longer than the longest backtick run inside, so no line ends it."""
    longest = max((len(m) for line in lines for m in _TICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *lines, fence]


def _what(f: ResolvedFile) -> str:
    if f.why == EDITED:
        return "the committed file is not the clean merge (edited during the carry)"
    if f.why == EDITED_OUTSIDE:
        return "edited during the carry, outside the upstream change"
    return f"{escape(f.why)}, resolved by hand"


def _file_lines(f: ResolvedFile, budget: int) -> tuple[list[str], int]:
    """The lines of one resolved file, and how many dropped lines it showed."""
    head = f"- {code(f.path)}: {_what(f)}"
    if f.note:
        head += f"; {escape(f.note)}"
    if not f.dropped_count:
        if f.added_count:
            head += f"; every one of the {plural(f.added_count, 'line')} the upstream added is kept"
        return [head + "."], 0
    head += (
        f"; {of_total(f.dropped_count, f.added_count, 'line')} the upstream added"
        f" {'is' if f.dropped_count == 1 else 'are'} not in it (dropped or changed)"
    )
    shown = list(f.dropped[: max(0, budget)])
    more = f.dropped_count - len(shown)
    out = [head + ":", "", *fenced([f"-{line}" for line in shown], "diff")]
    if more:
        out.append(f"… and {plural(more, 'more line')}.")
    return [*out, ""], len(shown)


def _pr_head(r: Resolution, line: PrLine | None, repo: str | None) -> str:
    ref = link(line.ref) if line is not None else code(r.label)
    title = escape(r.title, repo=repo)
    return f"{ref} {title} (in {code(r.commit[:12])}):" if title else f"{ref} (in {code(r.commit[:12])}):"


def render_resolutions(s: Summary) -> list[str]:
    """The section of the Summary: empty when nothing was resolved and the replay has no note."""
    done = s.resolutions
    if done is None or (not done.items and not done.notes):
        return []
    out = ["", "Carried with changes (conflicts resolved by hand, found by replaying the carry):"]
    if not done.items:
        out += ["", f"None of the {plural(done.replayed, 'carried item')} replayed was changed."]
    by_number = {p.number: p for p in s.applicable if p.number is not None}
    budget = MAX_LINES
    for r in done.items[:MAX_PRS]:
        out += ["", _pr_head(r, by_number.get(r.pr) if r.pr is not None else None, s.upstream_repo), ""]
        if budget <= 0:  # the report's limit: the files named, their lines left to the JSON
            names = ", ".join(code(f.path) for f in r.files[:BRIEF_FILES])
            more = " …" if len(r.files) > BRIEF_FILES else ""
            out.append(f"- {plural(len(r.files), 'file')} resolved by hand: {names}{more} (lines not shown).")
            continue
        for f in r.files[:MAX_FILES]:
            lines, used = _file_lines(f, budget)
            budget -= used
            out += lines
        if len(r.files) > MAX_FILES:
            out.append(f"- … and {plural(len(r.files) - MAX_FILES, 'more file')}.")
        while out and out[-1] == "":
            out.pop()
    if len(done.items) > MAX_PRS:
        out += ["", f"… and {plural(len(done.items) - MAX_PRS, 'more PR')} carried with changes."]
    if done.notes:
        out += ["", *(f"- {escape(n)}" for n in done.notes)]
    return out
