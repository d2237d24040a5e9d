"""GitHub Actions workflow commands (``::error file=…,line=…,title=…::message``).

The runner reads every line of a step's output that starts (after blanks) with ``::`` as a
command, so each value is escaped the way GitHub's own toolkit does: ``%``, ``\\r`` and ``\\n`` in
the message; those and ``:`` and ``,`` in a property. A hostile patch name or message therefore
stays inside its own command: it cannot end it, add a property or start another line. Other
control characters (ESC, bidi overrides) are shown as escapes, since the log viewer renders them.

While vimesync prints its human output the runner's command processing is switched off with
``::stop-commands::<random token>`` (see :func:`stop_commands`): a line of ours that quotes a
file name beginning with ``::`` is then only text."""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from vimesync.outputs.model import Annotation
from vimesync.text import visible

MAX_ANNOTATIONS = 50  # GitHub shows at most 10 errors a step and 50 a job; the rest go to a notice
MAX_MESSAGE = 4000


def escape_data(text: str) -> str:
    """A command's message: ``%``, CR and LF percent-encoded (newlines survive as line breaks)."""
    text = visible(text[:MAX_MESSAGE], newlines=True).replace("\r", "\\r")
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: also ``:`` and ``,``, which would end it."""
    text = visible(text[:1000])  # a property is one line: newlines shown as \\n
    return (
        text.replace("%", "%25")
        .replace("\r", "%0D")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )


def command(a: Annotation) -> str:
    """One workflow command line for ``a``."""
    props = []
    if a.file:
        props.append(f"file={escape_property(a.file)}")
        if a.line:
            props.append(f"line={int(a.line)}")
            if a.col:
                props.append(f"col={int(a.col)}")
    if a.title:
        props.append(f"title={escape_property(a.title)}")
    head = f"::{a.level}" + (" " + ",".join(props) if props else "")
    return f"{head}::{escape_data(a.message)}"


def commands(annotations: Iterable[Annotation], *, limit: int = MAX_ANNOTATIONS) -> list[str]:
    """The command lines of ``annotations``, at most ``limit`` and a notice counting the rest."""
    items = list(annotations)
    lines = [command(a) for a in items[:limit]]
    if len(items) > limit:
        rest = len(items) - limit
        lines.append(
            command(
                Annotation(
                    "notice",
                    "vimesync",
                    f"{rest:,} more not annotated here: see the job summary or the JUnit report",
                )
            )
        )
    return lines


def stop_commands() -> tuple[str, str]:
    """The pair of lines that switch the runner's command processing off and on again."""
    token = secrets.token_hex(16)
    return f"::stop-commands::{token}", f"::{token}::"
