"""``vimesync init``: write the files a downstream needs, each with commented examples."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT
from vimesync.cli.ownoptions import INIT

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags
    from vimesync.app.init import InitRequest
    from vimesync.settings import Settings


def init(
    settings: Settings,
    request: InitRequest = INIT,
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Write vimesync.toml, the upstream and engine pins, patches/series, sop/policy.toml and
    sop/SYNC.md (each with commented examples), then print the next three commands."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.app.init import init as run
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.init import render_init

    emit = Emit(out, settings)
    return emit.result(run(request), render_init)
