"""``carry`` as text: what was carried, skipped, planned or stopped at; the state of a carry in
progress; what --abort removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.carry import AbortResult, CarryResult, CarryStatusResult


def _label(pr: int | None, sha: str = "") -> str:
    return f"#{pr}" if pr is not None else f"{sha[:12]} (direct)"


def render_carry(result: CarryResult | CarryStatusResult | AbortResult) -> None:
    from vimesync.app.carry import AbortResult, CarryStatusResult

    if isinstance(result, CarryStatusResult):
        _render_status(result)
    elif isinstance(result, AbortResult):
        _render_abort(result)
    else:
        _render_result(result)


def _render_result(result: CarryResult) -> None:
    from vimesync.carry.model import CarryStatus, left_out

    print_ = output.stdout.print
    for c in result.carried:
        commit = (c.commit or "")[:12]
        print_(
            output.styled(("carried ", "green"), f"{_label(c.pr, c.upstream_commit)} {c.title}  -> {commit}")
        )
    for s in result.skipped:
        print_(
            output.styled(("skipped ", "yellow"), f"{_label(s.pr, s.upstream_commit)} {s.title}: {s.reason}")
        )
    for p in result.planned:
        tags = []
        if p.conflict and p.knock_on_only:
            tags.append(f"knock-on of {', '.join(p.after)}: {', '.join(p.conflict)}")
        elif p.conflict:
            tags.append(f"would conflict in {', '.join(p.conflict)}")
        if p.empty:
            tags.append("empty after the merge")
        if p.translation_hits:
            tags.append(f"{p.translation_hits} translation hit(s)")
        if p.left_out:
            tags.append(f"leaves out {', '.join(p.left_out)}")
        what = f"{_label(p.pr, p.upstream_commit)} {p.title}" + (f"  [{'; '.join(tags)}]" if tags else "")
        print_(output.styled(("plan ", "cyan"), what))
        for path in p.paths:
            print_(output.styled(f"    {path}"))
    if result.status is CarryStatus.NOTHING:
        output.out(f"nothing to carry: {result.base[:12]}..{result.tip[:12]}")
    elif result.status is CarryStatus.PLANNED:
        n = sum(1 for p in result.planned if p.conflict and not p.knock_on_only)
        k = sum(1 for p in result.planned if p.knock_on_only)
        knock = (
            f" (and {k} more as knock-on of those: their conflicts may go once it is resolved)" if k else ""
        )
        output.out(f"dry run: {len(result.planned)} to carry, {n} would conflict{knock}; nothing was changed")
    elif result.status is CarryStatus.CONFLICT and result.conflict is not None:
        stop = result.conflict
        print_(
            output.styled(("conflict ", "bold red"), f"{_label(stop.pr, stop.upstream_commit)} {stop.title}")
        )
        for f in stop.files:
            print_(output.styled(f"    {f.path} ({f.why})" + (f": {', '.join(f.hunks)}" if f.hunks else "")))
            if f.hint:
                print_(output.styled(("      hint: ", "yellow"), f.hint))
        print_(output.styled(f"worktree: {result.worktree}"))
        output.out(
            "resolve the files there and git add them, then: vimesync carry --continue"
            "  (or --skip to leave this PR out, --abort to drop the carry)"
        )
    else:
        print_(output.styled(f"branch {result.branch} in worktree {result.worktree}"))
        output.out(", ".join(filter(None, (f"{len(result.carried):,} carried", left_out(result.skipped)))))


def _render_status(doc: CarryStatusResult) -> None:
    if not doc.in_progress:
        output.out("no carry in progress")
        return
    output.out(
        f"carry {doc.base[:12]}..{doc.tip[:12]} on {doc.branch} ({doc.worktree}): {doc.done}/{doc.total} done"
    )
    if doc.conflict is not None:
        c = doc.conflict
        output.stdout.print(
            output.styled(f"stopped at a conflict: {_label(c.pr, c.upstream_commit)} {c.title}")
        )
        for f in c.files:
            output.stdout.print(output.styled(f"    {f.path} ({f.why})"))
        output.out("next: resolve, git add, vimesync carry --continue (or --skip, --abort)")
    else:
        output.out("interrupted: vimesync carry --continue goes on, --abort drops it")


def _render_abort(result: AbortResult) -> None:
    if result.branch is None and result.worktree is None:
        output.out("aborted: nothing removed")
    else:
        output.stdout.print(
            output.styled(f"aborted: removed branch {result.branch} and worktree {result.worktree}")
        )
