"""``sync`` as text: one progress line per step with its figure, then where it stopped and the
command that moves on; the state of a sync (``--status``); what ``--abort`` removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.syncresult import Step, SyncAbortResult, SyncResult, SyncStatusResult


def render_step(step: Step) -> None:
    """One line as each step ends (text mode only: the use case calls it)."""
    mark = ("", "") if step.ok else ("  ✗", "bold red")
    again = "  (done before)" if step.reused else ""
    output.stdout.print(output.styled((f"{step.name}: ", "bold"), step.figure, (again, "dim"), mark))


def render_sync(result: SyncResult | SyncStatusResult | SyncAbortResult) -> None:
    from vimesync.app.syncresult import SyncAbortResult, SyncStatusResult

    if isinstance(result, SyncStatusResult):
        _render_status(result)
    elif isinstance(result, SyncAbortResult):
        _render_abort(result)
    else:
        _render_result(result)


def _render_result(result: SyncResult) -> None:
    print_ = output.stdout.print
    if result.stopped is not None:
        print_(output.styled(("stopped ", "bold red"), f"at {result.stopped}: {result.decision or ''}"))
        print_(output.styled(("next: ", "bold"), result.next or ""))
    elif result.up_to_date:
        where = f" ({result.branch})" if result.branch else ""
        output.out(f"up to date{where}: nothing left to carry, {_held(result)}; nothing changed")
    else:
        print_(output.styled(("done: ", "bold green"), f"{_held(result)}; the report is in {result.report}"))


def _held(result: SyncResult) -> str:
    """``every gate holds``, or the status step's words when a gate is blocked (never summed up
    as holding)."""
    figure = next((s.figure for s in result.steps if s.name == "status"), "")
    return figure if figure.startswith("all gates hold but ") else "every gate holds"


def _render_status(result: SyncStatusResult) -> None:
    s = result.state
    if s is None:
        output.out("no sync in progress")
        return
    head = "finished" if s.finished else "in progress"
    print_ = output.stdout.print
    print_(
        output.styled(
            f"sync {head}: {s.branch or '(no branch)'} onto {s.onto[:12]}, baseline {s.baseline[:12]}"
        )
    )
    for st in s.steps:
        print_(output.styled((f"{st.name}: ", "bold"), st.figure, ("" if st.ok else "  ✗", "bold red")))
    nxt = result.next_step()
    if nxt is not None:
        output.out(f"next step: {nxt} (vimesync sync --continue)")


def _render_abort(result: SyncAbortResult) -> None:
    if result.carry is not None:
        c = result.carry
        if c.branch is not None or c.worktree is not None:
            removed = f"removed branch {c.branch} and worktree {c.worktree}"
            output.stdout.print(output.styled(f"aborted the carry: {removed}"))
        else:
            output.out("aborted the carry")
        output.notes(c.notes)
    if result.branch is not None:
        where = f" and its worktree {result.worktree}" if result.worktree else ""
        output.out(f"removed the sync branch {result.branch}{where} (nothing was committed on it since)")
    if result.kept is not None:
        output.out(result.kept)
        output.out(f"to remove them: {result.remove}")
    output.out("the sync's state is removed")
