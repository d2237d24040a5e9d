"""``pin radar`` as text (a table per patch: its upstream references and the verdict) or Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.radar import RadarResult
    from vimesync.report.radar import RefState

_STYLE = {
    "in-pin": "magenta",
    "merged": "yellow",
    "merged-unknown": "yellow",
    "open": "cyan",
    "closed": "green",
    "unknown": "dim",
    "none": "dim",
}


def _ref(s: RefState) -> str:
    if s.state == "merged":
        where = "" if s.in_pin is None else ", in the pin" if s.in_pin else ", not in the pin"
        commit = f" as {s.merge_commit[:12]}" if s.merge_commit else ""
        tag = f", first in {s.first_tag}" if s.first_tag else ""
        return f"{s.ref.text}: merged{commit}{where}{tag}"
    if s.state == "unknown":
        return f"{s.ref.text}: ?"
    return f"{s.ref.text}: {s.state}"


def render_radar(result: RadarResult, *, markdown: bool = False) -> None:
    if markdown:
        _markdown(result)
        return
    from rich import box
    from rich.table import Table

    con = output.stdout
    pin = f" at {result.pin[:12]}" if result.pin else ""
    con.print(output.styled((result.engine or "engine", "bold"), f" pin radar: {result.repo}{pin}"))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("Patch")
    table.add_column("Upstream", overflow="fold")
    table.add_column("Verdict", overflow="fold")
    for p in result.patches:
        refs = "; ".join(_ref(s) for s in p.refs) or "-"
        table.add_row(output.styled(p.name), output.styled(refs), output.styled((p.words, _STYLE[p.verdict])))
    con.print(table)
    if result.backports is not None:
        _candidates(result)
    drop = [p.name for p in result.patches if p.verdict == "in-pin"]
    if drop:
        from vimesync.text import plural

        con.print(
            output.styled(
                (f"In the pin already ({plural(len(drop), 'patch', 'patches')}): ", "bold"), ", ".join(drop)
            )
        )


def _candidates(result: RadarResult) -> None:
    from rich import box
    from rich.table import Table

    from vimesync.text import plural

    b = result.backports
    assert b is not None
    con = output.stdout
    head = f"Backport candidates up to {b.to} ({b.tip[:12]}): "
    count = f"{plural(b.total, 'commit')} after the pin on the patched files"
    con.print(output.styled((head, "bold"), count))
    if not b.candidates:
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("Commit", "PR", "Touches", "Patches"):
        table.add_column(name, overflow="fold")
    table.add_column("Subject", overflow="fold")
    for c in b.candidates:
        touches = ("the same lines", "yellow") if c.relation == "same-lines" else ("the same file", "dim")
        table.add_row(
            output.styled(c.sha[:12]),
            output.styled(f"#{c.pr}" if c.pr is not None else "-"),
            output.styled(touches),
            output.styled(", ".join(c.patches)),
            output.styled(c.subject),
        )
    con.print(table)
    if b.left_off:
        con.print(output.styled(f"... and {plural(b.left_off, 'more commit')} (--max-candidates N)"))


def _markdown(result: RadarResult) -> None:
    from vimesync.report.backportsmd import commits_table, left_off_line
    from vimesync.report.mdtext import cell, code
    from vimesync.report.mentions import finish_markdown
    from vimesync.text import plural

    lines = [
        f"### Upstream radar of {cell(result.engine or 'the engine')} ({code(result.repo)})",
        "",
        "| Patch | Upstream | Verdict |",
        "|---|---|---|",
    ]
    for p in result.patches:
        refs = "<br>".join(cell(_ref(s)) for s in p.refs) or "—"
        lines.append(f"| {code(p.name, in_table=True)} | {refs} | {cell(p.words)} |")
    b = result.backports
    if b is not None:
        lines += [
            "",
            f"### Backport candidates up to {code(b.to)} ({code(b.tip[:12])})",
            "",
            f"{plural(b.total, 'commit')} after the pin on the patched files"
            + (":" if b.candidates else "."),
        ]
        if b.candidates:
            lines += ["", *commits_table(b.candidates, result.repo), *left_off_line(b.left_off)]
    lines += ["", *(f"- {cell(n)}" for n in result.notes), ""]
    output.stdout.file.write(finish_markdown("\n".join(lines)))
    output.stdout.file.flush()
