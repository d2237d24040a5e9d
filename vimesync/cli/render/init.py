"""``init`` as text: what was written, the notes, the next commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.init import InitOutcome


def render_init(outcome: InitOutcome) -> None:
    for name in outcome.written:
        output.out(f"wrote {outcome.root / name}")
    for note in outcome.advice:
        output.stdout.print(output.styled(("note: ", "dim"), note))
    output.out("\nNext:")
    for i, command in enumerate(outcome.next_commands, 1):
        output.out(f"  {i}. {command}")
    output.out("Every key is documented in docs/config.md; `vimesync <command> -h` lists the flags.")
