"""``pin scan``'s patch x release matrix as GitHub-flavoured Markdown and as an SVG picture.

Pure: a :class:`~vimesync.check.scan.ScanReport` in, text out. Every patch name, release label
and verdict comes from the series or a source, so each is escaped for where it lands: Markdown
table cells (report.mdtext.cell: punctuation, pipes, bare ``#N``) and XML text/attributes.
"""

from __future__ import annotations

from xml.sax.saxutils import escape as xml_escape

from vimesync.check.scan import ScanReport
from vimesync.report.mdtext import cell, code
from vimesync.report.mentions import finish_markdown
from vimesync.text import plural

# One colour per status (fill, and the word shown in a cell).
COLOURS = {
    "applied": ("#2da44e", "applies"),
    "offsets": ("#d4a72c", "offsets"),
    "already-applied": ("#8250df", "already applied"),
    "partly-applied": ("#e16f24", "partly applied"),
    "failed": ("#cf222e", "conflicts"),
    "skipped": ("#8c959f", "skipped"),
    "missing": ("#eaeef2", "not scanned"),
}
# A patch status's mark in GitHub Markdown (pin scan's matrix, pin bump's body).
STATUS_MARK = {
    "applied": "✅",
    "offsets": "🟡",
    "already-applied": "🟣",
    "partly-applied": "🟠",
    "failed": "❌",
    "skipped": "⚪",
    "missing": "—",
}


def scan_markdown(report: ScanReport) -> str:
    """A table, patches as rows and releases as columns, then a legend."""
    pin = {True: " (pin)", False: ""}
    head = ["Patch", *(code(r.label, in_table=True) + pin[r.pinned] for r in report.releases)]
    at = plural(len(report.releases), "release")
    lines = [
        f"### Patch stack of {cell(report.engine or 'the engine')} at {at}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for patch in report.patches:
        row = [code(patch, in_table=True)]
        for r in report.releases:
            c = report.cell(patch, r.label)
            row.append(f"{STATUS_MARK[c.status]} {cell(c.short or c.verdict)}")
        lines.append("| " + " | ".join(row) + " |")
    parsed = [r for r in report.releases if r.python_ok is False]
    if parsed:
        names = ", ".join(code(r.label) for r in parsed)
        lines += ["", f"Patched Python files do not parse at {names}."]
    lines += [
        "",
        " · ".join(f"{STATUS_MARK[s]} {word}" for s, (_, word) in COLOURS.items() if s != "missing"),
        "",
    ]
    # A patch's verdict names files, an engine name comes from its pin: no @mention or "fixes #12"
    # of theirs may act once this is pasted into a PR (the report's own finishing).
    return finish_markdown("\n".join(lines))


def _attr(text: str) -> str:
    return xml_escape(text, {'"': "&quot;", "'": "&apos;"})


def _visible(text: str, limit: int) -> str:
    """One line of printable text (XML 1.0 refuses most control characters), clipped."""
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scan_svg(report: ScanReport) -> str:
    """A grid: a row per patch, a column per release (the current pin's framed), a cell coloured
    by status (its verdict in a tooltip), a legend below."""
    cw, ch, left, top = 120, 24, 16 + 7 * min(40, max((len(p) for p in report.patches), default=8)), 48
    width = left + cw * max(1, len(report.releases)) + 16
    height = top + ch * len(report.patches) + 60
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for j, r in enumerate(report.releases):
        x = left + j * cw + cw // 2
        label = xml_escape(_visible(r.label, 18))
        if r.pinned:  # the current pin: its column framed, its label bold with "(pin)" above it
            out.append(
                f'<rect class="pin" x="{left + j * cw - 2}" y="{top - 34}" width="{cw + 2}" '
                f'height="{ch * len(report.patches) + 36}" fill="none" stroke="#0969da" stroke-width="2"/>'
            )
            out.append(f'<text x="{x}" y="{top - 24}" text-anchor="middle" fill="#0969da">pin</text>')
            label = f'<tspan font-weight="bold">{label}</tspan>'
        out.append(f'<text x="{x}" y="{top - 8}" text-anchor="middle">{label}</text>')
    for i, patch in enumerate(report.patches):
        y = top + i * ch
        out.append(f'<text x="8" y="{y + 16}">{xml_escape(_visible(patch, 40))}</text>')
        for j, r in enumerate(report.releases):
            c = report.cell(patch, r.label)
            fill, word = COLOURS[c.status]
            tip = _attr(_visible(f"{patch} at {r.label}: {c.verdict}", 400))
            out.append(
                f'<rect x="{left + j * cw}" y="{y}" width="{cw - 2}" height="{ch - 2}" fill="{fill}">'
                f"<title>{tip}</title></rect>"
            )
            colour = "#000000" if c.status in ("offsets", "missing") else "#ffffff"
            out.append(
                f'<text x="{left + j * cw + cw // 2 - 1}" y="{y + 16}" text-anchor="middle" '
                f'fill="{colour}">{xml_escape(word)}</text>'
            )
    y = top + ch * len(report.patches) + 24
    x = 8
    for status, (fill, word) in COLOURS.items():
        if status == "missing":
            continue
        out.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{fill}"/>')
        out.append(f'<text x="{x + 16}" y="{y}">{xml_escape(word)}</text>')
        x += 24 + 7 * len(word)
    out.append("</svg>")
    return "\n".join(out) + "\n"
