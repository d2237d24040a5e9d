"""Where the CLI writes: results to stdout, diagnostics and progress to stderr.

Every string that came from a file, a commit or the user is shown, never obeyed: :func:`styled`
builds rich ``Text`` (never parsed as markup) with its control characters shown as escapes
(``\\x1b``, ``\\r``, ``\\u202e``), so neither ``[/tmp]`` in a hunk line nor an ESC sequence in a
commit subject can crash, restyle or rewrite the terminal. :func:`out` does the same for a whole line.

rich is imported on first use (``output.stdout``, ``output.stderr``, :func:`styled`), not at
import: ``vimesync --help`` and ``--version`` never need it.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import TYPE_CHECKING, Any

from vimesync.text import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    stdout: Console
    stderr: Console


@cache
def _console(name: str) -> Console:
    from rich.console import Console

    # No emoji codes (":rocket:" in a title stays text), no highlighting of numbers or paths.
    return Console(stderr=name == "stderr", soft_wrap=True, highlight=False, emoji=False)


def __getattr__(name: str) -> Any:
    """``output.stdout`` and ``output.stderr``: the two rich consoles, made on first use."""
    if name in ("stdout", "stderr"):
        return _console(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def styled(*parts: str | tuple[str, str]) -> Text:
    """One line from pieces, each ``text`` or ``(text, style)``: never read as markup, control
    characters shown escaped. What every renderer prints, table cells included."""
    from rich.text import Text

    line = Text()
    for part in parts:
        text, style = part if isinstance(part, tuple) else (part, "")
        line.append(visible(str(text)), style=style or None)
    return line


def out(text: str) -> None:
    """One or more plain lines on stdout, no markup; control characters shown escaped."""
    _console("stdout").print(visible(text, newlines=True), markup=False)


def error(message: str, *, hint: str | None = None) -> None:
    _console("stderr").print(styled(("error:", "bold red"), " ", message))
    if hint:
        _console("stderr").print(styled(("hint:", "dim"), " ", hint))


def warn(message: str) -> None:
    _console("stderr").print(styled(("warning:", "yellow"), " ", message))


def emit_json(doc: Any) -> None:
    """Exactly one JSON document on stdout (ASCII only: no raw control or bidi character)."""
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False, default=str, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def progress_enabled() -> bool:
    return _console("stderr").is_terminal
