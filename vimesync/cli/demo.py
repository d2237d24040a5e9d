"""``vimesync demo``: build the embedded example and run the whole sync pipeline on it."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from vimesync.cli import output
from vimesync.cli.options import DocFormatOpt, JsonOpt, KeepOpt, output_format
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK


def demo(keep: KeepOpt = None, fmt: DocFormatOpt = None, json_: JsonOpt = False) -> int:
    """Run the whole sync pipeline on the embedded example and print its report.

    Builds a Slime-like upstream, a Vime-like downstream and a pinned vLLM-shaped engine with a
    four-patch stack as real git repositories (no network), then walks, checks, audits and reports.
    """
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.check.model import check_options
    from vimesync.cli.progress import parse_progress
    from vimesync.config import load_config
    from vimesync.demo.build import build_demo
    from vimesync.report.document import render_json
    from vimesync.report.generate import ReportInputs, generate_report
    from vimesync.report.markdown import render_markdown

    as_json = output_format(fmt, json_) == "json"
    root = keep.resolve() if keep else Path(tempfile.mkdtemp(prefix="vimesync-demo-"))
    try:
        d = build_demo(root)
        cfg = load_config(d.downstream / "vimesync.toml")
        output.stderr.print(
            output.styled(
                (
                    f"demo: upstream {d.upstream} ({d.base[:8]}..{d.tip[:8]}), downstream {d.downstream} "
                    f"(sync {d.baseline[:8]}..{d.head[:8]}), engine {d.engine} @ {d.engine_rev[:8]}",
                    "dim",
                )
            )
        )
        # Every location as a flag would name it: the demo built them, so they are trusted even in an
        # untrusted (CI) session, where locations the checkout's config names outside it are not.
        inputs = ReportInputs(
            config=cfg,
            upstream=d.upstream,
            downstream=d.downstream,
            baseline=d.baseline,
            head=d.head,
            check=check_options(cfg, source=d.engine, require_exact=True),
        )
        with parse_progress(enabled=output.progress_enabled()) as progress:
            report = generate_report(inputs, progress=progress)
        # The example lives on this machine only: no GitHub, so no exact-head CI to read.
        report = replace(report, gates_off=(("ci", "the demo runs offline: it has no GitHub CI to read"),))
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if as_json:
        output.emit_json(render_json(report))
    else:
        output.out(render_markdown(report).rstrip("\n"))
    if keep is not None:
        output.stderr.print(
            output.styled(
                (
                    f"The example is in {root}: cd {d.downstream} (the sync branch `vimesync carry` made)"
                    f" and try `vimesync walk --range {d.base[:12]}..{d.tip[:12]}`,"
                    " `vimesync patches check`, `vimesync audit --baseline main`,"
                    f" `vimesync report --baseline main`; {d.checkout} is the fork on main, before the sync.",
                    "dim",
                )
            )
        )
    return EXIT_OK if report.gates_ok else EXIT_CHECK_FAILED
