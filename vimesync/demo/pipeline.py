"""``demo`` as a use case: build the embedded example and run the sync report on it.

It lives with the example, not in :mod:`vimesync.app`: the application layer comes before the
demo (the example is built from the application's parts, not the other way round), and this is
the one use case that needs :mod:`vimesync.demo.build`."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.report.model import SyncReport


@dataclass(frozen=True)
class DemoRequest:
    keep: Path | None = None  # where to build and keep the example (None: a temporary folder)


@dataclass(frozen=True)
class DemoOutcome:
    report: SyncReport
    built: str  # what was built, in one line
    kept: str | None  # where the example is and what to try there, when kept
    kind: Kind = Kind.DEMO

    @property
    def ok(self) -> bool:
        return self.report.gates_ok

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    @property
    def notes(self) -> tuple[str, ...]:
        return (self.built,) + ((self.kept,) if self.kept else ())

    def to_json(self) -> dict[str, Any]:
        from vimesync.report.document import render_json

        return document(self.kind, self.exit_code, render_json(self.report))


def run_demo(request: DemoRequest, *, progress: Progress = no_progress) -> DemoOutcome:
    """Build a Slime-like upstream, a Vime-like downstream and a pinned engine with a four-patch
    stack as real git repositories (no network), then walk, check, audit and report."""
    from vimesync.check.model import check_options
    from vimesync.config import load_config
    from vimesync.demo.build import build_demo
    from vimesync.report.generate import ReportInputs, generate_report

    keep = request.keep
    root = keep.resolve() if keep else Path(tempfile.mkdtemp(prefix="vimesync-demo-"))
    try:
        d = build_demo(root)
        cfg = load_config(d.downstream / "vimesync.toml")
        built = (
            f"demo: upstream {d.upstream} ({d.base[:8]}..{d.tip[:8]}), downstream {d.downstream} "
            f"(sync {d.baseline[:8]}..{d.head[:8]}), engine {d.engine} @ {d.engine_rev[:8]}"
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
        with progress() as update:
            report = generate_report(inputs, progress=update)
        # The example lives on this machine only: no GitHub, so no exact-head CI to read, and it
        # runs no test suite, so it has no evidence to record (sop record tests).
        off = (
            ("tests", "the demo runs no test suites: it has no evidence to record"),
            ("ci", "the demo runs offline: it has no GitHub CI to read"),
        )
        report = replace(report, gates_off=off)
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
    kept = None
    if keep is not None:
        kept = (
            f"The example is in {root}: cd {d.downstream} (the sync branch `vimesync carry` made)"
            f" and try `vimesync walk --range {d.base[:12]}..{d.tip[:12]}`,"
            " `vimesync patches check`, `vimesync audit --baseline main`,"
            f" `vimesync report --baseline main`; {d.checkout} is the fork on main, before the sync."
        )
    return DemoOutcome(report, built, kept)
