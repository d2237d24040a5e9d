"""``sop record image`` and ``sop promote`` as text (every value from a flag or a record goes
through ``output.styled``: a blocked reason is user text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.images import RecordImageResult
    from vimesync.app.promote import PromoteResult


def render_record_image(result: RecordImageResult) -> None:
    r = result.record
    if result.refused:
        output.error(f"refused: {result.refused}")
        return
    if r.is_blocked:
        output.stdout.print(
            output.styled(
                f"recorded {r.arch} as blocked at {r.sha[:8]}: ", (r.blocked, "yellow"), f" in {result.file}"
            )
        )
        return
    on = f" built on {r.host}" if r.host else ""
    output.stdout.print(
        output.styled(f"recorded {r.arch} image {r.digest}{on} at {r.sha[:8]} in {result.file}")
    )


def render_promote(result: PromoteResult) -> None:
    """``vllm/vime:latest moved to sha256:… (verified in …)``, ``… to be moved to sha256:…
    (recorded, not verified)`` or why it remains unchanged (one line per gate)."""
    con = output.stdout
    p = result.promotion
    if p is not None:
        how = f" (verified in {p.verified})" if p.verified else " (recorded, not verified)"
        verb = " moved to " if p.verified else " to be moved to "
        con.print(output.styled((result.ref, "bold"), verb, (p.digest, "green"), f" at {p.sha[:8]}{how}"))
        con.print(output.styled(("  recorded in ", "dim"), str(result.file)))
        return
    con.print(
        output.styled(
            (result.ref, "bold"),
            " remains unchanged: ",
            ("promotion refused", "bold red"),
            f" at {result.head[:8]}",
        )
    )
    for g in result.gates:
        mark, style = ("✓", "green") if g.ok else ("✗", "red")
        con.print(output.styled((f"  {mark} ", style), (f"{g.name:<7}", "bold"), g.detail))
        if not g.ok and g.command:
            con.print(output.styled(" " * 12, ("→ ", "dim"), (g.command, "cyan")))
