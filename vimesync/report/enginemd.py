"""The Engine patches section in Markdown: each engine's pin and its patch table (purpose, the PRs
and bugs it names, what changed since the baseline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vimesync.report.links import Ref, pr_ref
from vimesync.report.mdtext import DASH, MAX_REFS, cell, code, escape, link, rev
from vimesync.report.model import EnginePatches, Skipped
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.report.radar import RefState


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


def _upstream_cell(states: Sequence[RefState], repo: str | None) -> str:
    """``merged [owner/name#47933](…), absent from the pin; open [owner/name#48001](…)``: the
    state of each engine PR (or commit) the header names, at most MAX_REFS; a PR's title is
    never shown (its author's text)."""
    parts = []
    for s in states[:MAX_REFS]:
        ref = (
            link(pr_ref(repo, s.ref.number))
            if s.ref.number is not None and repo
            else code(s.ref.text, in_table=True)
        )
        if s.state == "merged":
            where = {True: ", in the pin", False: ", absent from the pin", None: ""}[s.in_pin]
            parts.append(f"merged {ref}{where}")
        elif s.state == "closed":
            parts.append(f"closed unmerged {ref}")
        elif s.state == "open":
            parts.append(f"open {ref}")
        else:
            parts.append(f"{ref} not checked")
    if len(states) > MAX_REFS:
        parts.append(f"and {len(states) - MAX_REFS:,} more")
    return "; ".join(parts)


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
        if row.header_uncommitted:
            purpose += f" (header in the work tree not committed: run {code('git commit', in_table=True)})"
        if row.status:
            purpose += f" (**{cell(row.status)}**)"
        if row.upstream:
            purpose += f" Upstream: {_upstream_cell(row.upstream, e.repo)}."
        change = f" {row.change or DASH} |" if marked else ""
        out.append(f"| {code(row.name, in_table=True)} | {purpose} |{change}")
    for name in e.removed:
        out.append(f"| {code(name, in_table=True)} | {DASH} | removed |")
    if e.upstream_not_checked:
        # After a failed lookup the PRs asked before it show their state: "not checked" is only
        # what the rows marked so are.
        asked = any(s.ref.number is not None and s.state != "unknown" for row in e.rows for s in row.upstream)
        said = "partly checked" if asked else "not checked"
        out += ["", f"Upstream state of the engine PRs named: {said} ({escape(e.upstream_not_checked)})."]
    return out


def render_engines(engines: Sequence[EnginePatches | Skipped]) -> list[str]:
    """One Engine patches section: one table per engine, each under the sentence naming its pin."""
    out = render_engine(engines[0])
    for e in engines[1:]:
        out += ["", *render_engine(e, heading=False)]
    return out
