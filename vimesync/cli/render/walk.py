"""``walk`` as text: a table of the PRs, the direct commits, the totals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.app.walk import WalkOutcome


def render_walk(outcome: WalkOutcome) -> None:
    from rich.table import Table

    from vimesync.app.walk import joined, partly_excluded, status_of, totals
    from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED

    result = outcome.walk
    if outcome.empty:
        output.out(f"nothing to sync: {result.base[:12]}..{result.tip[:12]} is empty")
        return
    style = {APPLICABLE: "green", EXCLUDED: "red", MIRRORED: "cyan"}
    # Titles, reasons and the upstream name come from commits and config: output.styled shows them
    # as text (never rich markup, control characters escaped).
    table = Table(
        title=output.styled(f"{result.upstream} {result.base[:12]}..{result.tip[:12]}"), title_justify="left"
    )
    table.add_column("PR", justify="right", no_wrap=True)
    table.add_column("title", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("reason", overflow="fold")
    for pr in result.prs:
        d = pr.decision
        status = status_of(pr)
        reason = d.reason if d else ""
        if d and d.rule:
            reason = f"{reason} (rule {d.rule})"
        if d and d.partial_paths:
            reason = joined(reason, partly_excluded(d.partial_paths, 3))
        if pr.reverts:
            reason = joined(reason, f"reverts #{pr.reverts}")
        table.add_row(
            f"#{pr.number}",
            output.styled(pr.title),
            output.styled((status, style[status])),
            output.styled(reason),
        )
    output.stdout.print(table)
    if result.direct_commits:
        output.out(f"direct commits (no PR): {len(result.direct_commits):,}")
        for c in result.direct_commits:
            extra = f"  (reverts #{c.reverts})" if c.reverts else ""
            extra += f"  (mirrored: {c.mirrored_by})" if c.mirrored_by else ""
            output.stdout.print(output.styled(f"  {c.sha[:12]} {c.title}{extra}"))
    t = totals(result)
    output.out(
        f"{plural(t['prs'], 'PR')}: {t[APPLICABLE]:,} applicable, {t[EXCLUDED]:,} excluded, "
        f"{t[MIRRORED]:,} mirrored; {plural(t['direct_commits'], 'direct commit')}"
    )
