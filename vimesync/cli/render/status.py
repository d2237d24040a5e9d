"""How ``vimesync sop status`` shows the gates: a checklist, and the command that moves each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.sop.gates import gates_verdict

if TYPE_CHECKING:
    from vimesync.app.status import StatusResult
    from vimesync.report.checklist import SopStatus


_MARK = {
    "held": ("✓", "bold green"),
    "failed": ("✗", "bold red"),
    "pending": ("pending", "yellow"),
    "blocked": ("blocked", "yellow"),
    "not checked": ("not run", "yellow"),
    "off": ("off", "dim"),
}


def render_status(result: StatusResult) -> None:
    _render_status(result.status)


def _render_status(status: SopStatus) -> None:
    con = output.stdout
    con.print(output.styled(("Sync ", "bold"), (status.sync, "bold"), f" at head {status.head[:8]}"))
    for g in status.gates:
        mark, style = _MARK[g.state]
        con.print(output.styled((f"{mark:>7} ", style), (f"{g.name:<10}", "bold"), " ", g.detail))
        if g.command:
            con.print(output.styled(" " * 19, ("→ ", "dim"), (g.command, "cyan")))
    verdict = gates_verdict(status.gates)
    con.print(
        output.styled(
            ("OK" if status.ok else "NOT READY", "bold green" if status.ok else "bold red"),
            f": {verdict}.",
        )
    )
