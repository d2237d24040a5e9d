"""The Engine patches section in Markdown: each engine's pin and its patch table (purpose, the PRs
and bugs it names, what changed since the baseline)."""

from __future__ import annotations

from collections.abc import Sequence

from vimesync.report.links import Ref
from vimesync.report.mdtext import DASH, MAX_REFS, cell, code, escape, link, rev
from vimesync.report.model import EnginePatches, Skipped
from vimesync.text import plural


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
        if row.header_uncommitted:
            purpose += f" (header in the work tree not committed: run {code('git commit', in_table=True)})"
        if row.status:
            purpose += f" (**{cell(row.status)}**)"
        change = f" {row.change or DASH} |" if marked else ""
        out.append(f"| {code(row.name, in_table=True)} | {purpose} |{change}")
    for name in e.removed:
        out.append(f"| {code(name, in_table=True)} | {DASH} | removed |")
    return out


def render_engines(engines: Sequence[EnginePatches | Skipped]) -> list[str]:
    """One Engine patches section: one table per engine, each under the sentence naming its pin."""
    out = render_engine(engines[0])
    for e in engines[1:]:
        out += ["", *render_engine(e, heading=False)]
    return out
