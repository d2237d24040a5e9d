"""``bot`` as text: the case and why, the sync's stop, the push, what was written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.botresult import BotResult


def render_bot(result: BotResult) -> None:
    print_ = output.stdout.print
    p, o = result.plan, result.observed
    print_(output.styled(("bot: ", "bold"), f"{p.case.value}: {p.why}"))
    output.out(f"upstream {o.tip[:8]}, {o.base} holds {o.pin[:8]}")
    if result.dry_run:
        output.out("dry run: nothing synced, pushed or written")
        return
    s = result.sync
    if s is not None and s.stopped is not None:
        print_(output.styled(("stopped ", "bold red"), f"at {s.stopped}: {s.decision or ''}"))
        print_(output.styled(("next: ", "bold"), s.next or ""))
    if result.pushed:
        output.out(f"push {p.branch}: {result.pushed}")
    for write in result.writes:
        output.out(f"wrote: {write}")
    if not result.writes and result.pushed != "lease refused":
        output.out("nothing written to GitHub")
    if result.pull:
        output.out(f"sync PR: {result.pull}")
    if result.dashboard:
        output.out(f"dashboard: {result.dashboard}")
