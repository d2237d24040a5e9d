"""``ci`` as text: the verdict, each context of the head, what is missing, what is not evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.app.ci import CiOutcome
    from vimesync.ci.verdict import CiEvidence


def render_ci(outcome: CiOutcome) -> None:
    render(outcome.evidence)


_STYLE = {"success": "green", "skipped": "dim", "pending": "yellow", "failure": "bold red"}
_MARK = {"success": "✓", "skipped": "-", "pending": "…", "failure": "✗"}
_VERDICT = {"green": "bold green", "pending": "yellow", "failing": "bold red", "missing": "bold red"}


def render(e: CiEvidence) -> None:
    """The verdict, each context of the head, what is missing, and what is not evidence."""
    con = output.stdout
    head8 = e.sha[:8]
    of = f" (head of PR #{e.pr})" if e.pr is not None else ""
    con.print(output.styled(f"CI of {e.repo} at {head8}{of}: ", (e.verdict, _VERDICT[e.verdict])))
    for r in e.results:
        desc = f" — {r.description}" if r.description else ""
        con.print(output.styled("  ", (f"{_MARK[r.state]} {r.label}", _STYLE[r.state]), f": {r.raw}{desc}"))
        if r.url and r.state != "success":
            con.print(output.styled(("    " + r.url, "dim")))
    if not e.results:
        con.print(output.styled(("  nothing reported on this commit", "red")))
    for name in e.missing:
        con.print(output.styled(("  ✗ " + name, "bold red"), ": required, never reported on ", head8))
    if e.earlier:
        con.print(output.styled(("Not evidence for " + head8, "bold"), f" (earlier commits of PR #{e.pr}):"))
        for r in e.earlier:
            con.print(output.styled(f"  {r.label}: {r.raw} on {r.sha[:8]}"))
    if e.earlier_cut:
        con.print(output.styled((f"  ({plural(e.earlier_cut, 'older commit')} of the PR not read)", "dim")))
