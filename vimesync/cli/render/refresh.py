"""``patches refresh`` as text: what became of the patch at the new pin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.app.refresh import RefreshOutcome


def render_refresh(outcome: RefreshOutcome) -> None:
    con = output.stdout
    files = plural(len(outcome.files), "edited file")
    con.print(output.styled(f"{outcome.name}: re-made from {files} in {outcome.folder / outcome.name}"))
    if outcome.written:
        con.print(output.styled(("OK", "bold green"), f": {outcome.name} {outcome.verdict} at {outcome.pin}"))
        con.print(output.styled(f"wrote {outcome.patch}"))
    else:
        con.print(
            output.styled(
                ("NEEDS WORK", "bold red"),
                f": at {outcome.pin} the re-made patch {outcome.verdict}; nothing written",
            )
        )
