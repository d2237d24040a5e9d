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
from vimesync.settings import Settings


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
    def about(self) -> tuple[str, ...]:
        """What was built and where it is kept: dim lines, not warnings."""
        return (self.built,) + ((self.kept,) if self.kept else ())

    def to_json(self) -> dict[str, Any]:
        from vimesync.report.document import render_json

        return document(self.kind, self.exit_code, render_json(self.report))


def run_demo(request: DemoRequest, settings: Settings, *, progress: Progress = no_progress) -> DemoOutcome:
    """Build a Slime-like upstream, a Vime-like downstream and a pinned engine with a four-patch
    stack as real git repositories (no network), then walk, check, audit and report."""
    from vimesync.app.flags import EngineFlags, SyncFlags
    from vimesync.app.report import assemble
    from vimesync.app.workspace import Workspace
    from vimesync.demo.build import build_demo

    keep = request.keep
    root = keep.resolve() if keep else Path(tempfile.mkdtemp(prefix="vimesync-demo-"))
    try:
        d = build_demo(root)
        built = (
            f"demo: upstream {d.upstream} ({d.base[:8]}..{d.tip[:8]}), downstream {d.downstream} "
            f"(sync {d.baseline[:8]}..{d.head[:8]}), engine {d.engine} @ {d.engine_rev[:8]}"
        )
        # Every location as a flag would name it: the demo built them, so they are trusted even in an
        # untrusted (CI) session, where locations the checkout's config names outside it are not.
        flags = SyncFlags(
            config=d.downstream / "vimesync.toml",
            upstream=d.upstream,
            downstream=d.downstream,
            baseline=d.baseline,
            head=d.head,
        )
        with Workspace.resolve(flags, settings, reading="head", cwd=d.downstream) as ws:
            report = assemble(ws, EngineFlags(source=d.engine), None, progress, what="demo")
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
