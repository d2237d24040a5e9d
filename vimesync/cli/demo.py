"""``vimesync demo``: build the embedded example and run the whole sync pipeline on it."""

from __future__ import annotations

from vimesync.cli import output
from vimesync.cli.options import DocFormatOpt, JsonOpt, KeepOpt, output_format


def demo(keep: KeepOpt = None, fmt: DocFormatOpt = None, json_: JsonOpt = False) -> int:
    """Run the whole sync pipeline on the embedded example and print its report.

    Builds a Slime-like upstream, a Vime-like downstream and a pinned vLLM-shaped engine with a
    four-patch stack as real git repositories (no network), then walks, checks, audits and reports.
    """
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.cli.progress import parse_progress
    from vimesync.cli.render.demo import demo_notes, render_demo
    from vimesync.demo.pipeline import DemoRequest, run_demo

    as_json = output_format(fmt, json_) == "json"
    result = run_demo(DemoRequest(keep), progress=lambda: parse_progress(enabled=output.progress_enabled()))
    if as_json:
        output.emit_json(result.to_json())
    else:
        render_demo(result)
    demo_notes(result)
    return result.exit_code
