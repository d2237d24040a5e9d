"""``sop record tests`` and ``sop record run`` as text: what was recorded, for which head."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.evidence import RecordResult


def render_record(result: RecordResult) -> None:
    from vimesync.report.evidence import describe_record
    from vimesync.sop.precommit import PrecommitRecord

    r = result.record
    bound = r.sha[:8]
    at = f"at {bound}" if r.sha == result.head else f"at {bound} (the evidence head of {result.head[:8]})"
    # A pre-commit record's line names itself ("Changed-file pre-commit passes ..."); others are
    # named by their suite or run.
    named = () if isinstance(r, PrecommitRecord) else ((r.name, "bold"), ": ")
    output.stdout.print(output.styled("recorded ", *named, f"{describe_record(r)} {at}"))
    output.stdout.print(output.styled(("  in ", "dim"), str(result.file)))
