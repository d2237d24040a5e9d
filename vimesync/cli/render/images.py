"""``sop record image`` and ``sop promote`` as text (every value from a flag or a record goes
through ``output.styled``: a blocked reason is user text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output

if TYPE_CHECKING:
    from vimesync.app.images import RecordImageResult


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
