"""The CI outputs every checking command offers: ``--junit FILE`` and ``--annotations``.

``--annotations auto`` (the default) means GitHub Actions annotations and a job summary when
``GITHUB_ACTIONS=true``, nothing otherwise. In text mode the workflow commands go to stdout after
the human output, which is printed with the runner's command processing switched off (a random
``::stop-commands::`` token), so no file name we quote can act as a command; with ``--json`` they
go to stderr, so that stdout stays one JSON document."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.errors import BadInput

if TYPE_CHECKING:  # the writers are imported when there is something to write
    from vimesync.outputs.model import Findings
    from vimesync.settings import Settings

MODES = ("auto", "github", "none")


class CiOutputs:
    """What one command writes for CI, decided (and its paths checked) before any work."""

    def __init__(
        self, junit: Path | None, annotations: str | Enum, settings: Settings, *, json_out: bool = False
    ) -> None:
        annotations = annotations.value if isinstance(annotations, Enum) else annotations
        if annotations not in MODES:
            raise BadInput(f"--annotations {annotations!r}: expected one of {', '.join(MODES)}")
        self.on_runner = settings.on_github_actions
        self.summary = settings.step_summary
        self.github = annotations == "github" or (annotations == "auto" and self.on_runner)
        self.junit = junit
        self.stream = sys.stderr if json_out else sys.stdout
        self.json_out = json_out
        if junit is not None:
            from vimesync.outputs.junit import check_junit_path

            check_junit_path(junit)

    @contextmanager
    def human_output(self) -> Iterator[None]:
        """Around the human output: the runner obeys no workflow command inside it. On a runner
        also with ``--annotations none``: the report's Markdown is printed raw, and a context it
        quotes in a code span could hold ``##[...]``."""
        if not (self.github or self.on_runner) or self.json_out:
            yield
            return
        from vimesync.outputs.annotations import stop_commands

        stop, resume = stop_commands()
        sys.stdout.write(stop + "\n")
        sys.stdout.flush()
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stdout.write(resume + "\n")
            sys.stdout.flush()

    @property
    def wanted(self) -> bool:
        """Anything to write: a JUnit file, or annotations and a summary."""
        return self.junit is not None or self.github

    def emit(self, findings: Findings) -> None:
        """The JUnit file, the annotations and the job summary of ``findings``."""
        from vimesync.outputs.annotations import commands
        from vimesync.outputs.junit import write_junit
        from vimesync.outputs.stepsummary import append_summary

        if self.junit is not None:
            write_junit(self.junit, findings.suites)
        if not self.github:
            return
        for line in commands(findings.annotations):
            self.stream.write(line + "\n")
        self.stream.flush()
        if self.summary is not None and findings.summary:
            append_summary(self.summary, findings.summary)
