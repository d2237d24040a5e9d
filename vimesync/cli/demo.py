"""``vimesync demo``: build the embedded example and run the whole sync pipeline on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli.groups import OUTPUT
from vimesync.cli.options import KeepOpt

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags
    from vimesync.settings import Settings


def demo(
    settings: Settings,
    keep: KeepOpt = None,
    out: OutputFlags = OUTPUT.take("format", "json", format="DocFormatOpt"),
) -> int:
    """Run the whole sync pipeline on the embedded example and print its report.

    Builds a Slime-like upstream, a Vime-like downstream and a pinned vLLM-shaped engine with a
    four-patch stack as real git repositories (no network), then walks, checks, audits and reports.
    """
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.demo import render_demo
    from vimesync.demo.pipeline import DemoRequest, run_demo

    emit = Emit(out, settings)
    return emit.result(run_demo(DemoRequest(keep=keep), settings, progress=emit.progress()), render_demo)
