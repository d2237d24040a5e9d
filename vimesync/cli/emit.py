"""The one tail of every command: its result's notes on stderr, then one JSON document or the human
text on stdout, then the CI outputs (``--junit``, annotations, the job summary), then its exit code.

What a command writes is decided before any work (:class:`Emit` checks the ``--junit`` path when
it is made), so a bad output path is refused before a long check runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from vimesync.cli import output, signals

if TYPE_CHECKING:
    from vimesync.app.flags import OutputFlags
    from vimesync.app.progress import Progress
    from vimesync.outputs.model import Findings
    from vimesync.settings import Settings


class Emittable(Protocol):
    @property
    def exit_code(self) -> int: ...

    def to_json(self) -> dict[str, Any]: ...


class Emit:
    """How one command's result reaches the user and CI."""

    def __init__(self, out: OutputFlags, settings: Settings, *, json_stdout: bool | None = None) -> None:
        from vimesync.cli.cioutputs import CiOutputs

        self.out = out
        self.as_json = out.as_json
        # with ``report --output`` the document goes to a file (its renderer writes it there):
        # stdout is then free for the CI outputs
        self.json_stdout = self.as_json if json_stdout is None else json_stdout
        self.ci = CiOutputs(out.junit, out.annotations, settings, json_out=self.json_stdout)

    def progress(self) -> Progress:
        """A use case's progress: shown on a terminal, never with ``--json`` or in CI."""
        from vimesync.cli.progress import progress_for

        return progress_for(self.as_json)

    def result(
        self,
        result: Emittable,
        render: Callable[[Any], None],
        *,
        findings: Callable[[], Findings] | None = None,
    ) -> int:
        """Notes (warnings), the document or the text, where things are (``about``: dim lines on
        stderr), the CI outputs (``findings``: when the result's own ``findings()`` is not what CI
        is told); the exit code. Not when a signal arrived while the result was worked out: the
        command was stopped, whatever the result says (see :mod:`vimesync.cli.signals`)."""
        signals.raise_received()
        output.notes(getattr(result, "notes", ()))
        if self.json_stdout:
            output.emit_json(result.to_json())
        else:
            with self.ci.human_output():
                render(result)
        for line in getattr(result, "about", ()):
            output.stderr.print(output.styled((line, "dim")))
        if self.ci.wanted:
            self.ci.emit(findings() if findings is not None else result.findings())  # type: ignore[attr-defined]
        return result.exit_code
