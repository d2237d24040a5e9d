"""Where the CLI writes: results to stdout, diagnostics and progress to stderr.

Every string that came from a file, a commit or the user is shown, never obeyed: :func:`styled`
builds rich ``Text`` (never parsed as markup) with its control characters shown as escapes
(``\\x1b``, ``\\r``, ``\\u202e``), so neither ``[/tmp]`` in a hunk line nor an ESC sequence in a
commit subject can crash, restyle or rewrite the terminal; nor can a context name or a patch name
be obeyed by the GitHub Actions runner as a workflow command (``text.inert``). :func:`out` does
the same for a whole line.

rich is imported on first use (``output.stdout``, ``output.stderr``, :func:`styled`), not at
import: ``vimesync --help`` and ``--version`` never need it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TextIO

from vimesync.text import inert, visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from vimesync.settings import Settings

    stdout: Console
    stderr: Console


# On a GitHub Actions runner: tables as wide as their content, never wrapped (see _width).
UNWRAPPED = 100_000
# Piped with no $COLUMNS: the width tables are laid out for (a log read in an 80-column pager,
# an issue comment). Plain lines are never wrapped when piped, whatever the width: a grep sees
# each whole.
PIPED_WIDTH = 80


@dataclass
class _Terminal:
    """What the job's environment says of the terminal (set by :func:`configure`)."""

    on_runner: bool = False
    on_ci: bool = False  # a CI job's log: no progress display
    columns: bool = False  # $COLUMNS is set: rich reads it


_TERMINAL = _Terminal()


def configure(settings: Settings) -> None:
    """Take what the consoles need from the job's environment (the CLI boundary's snapshot),
    before the first console is made."""
    _TERMINAL.on_runner = settings.on_github_actions
    _TERMINAL.on_ci = settings.on_ci
    _TERMINAL.columns = settings.columns is not None
    _console.cache_clear()


def _width(stream: TextIO) -> int | None:
    if _TERMINAL.on_runner:
        # Never wrapped on a runner (whatever COLUMNS says): a wrapped or folded table cell could
        # start a line with "::" that the runner reads as a workflow command.
        return UNWRAPPED
    if _TERMINAL.columns:
        return None  # rich reads it
    return None if _is_tty(stream) else PIPED_WIDTH


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@cache
def _console(name: str) -> Console:
    from rich.console import Console

    stream = sys.stderr if name == "stderr" else sys.stdout
    # On a terminal rich wraps a long line between words (the terminal would cut one anywhere);
    # piped, a line stays whole. No emoji codes (":rocket:" in a title stays text), no
    # highlighting of numbers or paths.
    wrap = _is_tty(stream) and not _TERMINAL.on_runner
    return Console(
        stderr=name == "stderr", soft_wrap=not wrap, highlight=False, emoji=False, width=_width(stream)
    )


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
        line.append(inert(visible(str(text))), style=style or None)
    if inert(line.plain) != line.plain:  # a command only the pieces together spell: plain text
        return Text(inert(line.plain))
    return line


def out(text: str) -> None:
    """One or more plain lines on stdout, no markup; control characters shown escaped."""
    _console("stdout").print(inert(visible(text, newlines=True)), markup=False)


def error(message: str, *, hint: str | None = None) -> None:
    _console("stderr").print(styled(("error:", "bold red"), " ", message))
    if hint:
        _console("stderr").print(styled(("hint:", "dim"), " ", hint))


def warn(message: str) -> None:
    _console("stderr").print(styled(("warning:", "yellow"), " ", message))


def notes(messages: Iterable[str]) -> None:
    """A result's notes (things to know, not errors), each a warning line on stderr."""
    for message in messages:
        warn(message)


def emit_json(doc: Any) -> None:
    """Exactly one JSON document on stdout (ASCII only: no raw control or bidi character; no
    ``##[`` the Actions runner would obey: ``#`` only occurs in strings, where ``\\u0023`` is it)."""
    sys.stdout.write(json_text(doc).replace("##[", "#\\u0023[") + "\n")
    sys.stdout.flush()


def json_text(doc: Any) -> str:
    """``doc`` as ``json.dumps(doc, indent=2, default=str, ensure_ascii=True)`` writes it, through
    orjson: the standard library indents in pure Python, about 15 ms of a walk of a whole upstream
    history (a 1 MB document; bench/bench_startup.py). Two differences, both JSON of the same
    value: a float below 1e-4 is written in full (``0.00001``, not ``1e-05``), and NaN or an
    infinity as ``null`` (the standard library writes ``NaN``, which is not JSON). What orjson
    refuses (a lone surrogate from a path read with surrogateescape, an integer past 64 bits) is
    written by the standard library."""
    import orjson  # here, not at import: --help does not need it

    # Dataclasses and datetimes through ``default=str``, as the standard library has them.
    options = (
        orjson.OPT_INDENT_2
        | orjson.OPT_NON_STR_KEYS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )
    try:
        text = orjson.dumps(doc, option=options, default=str).decode("utf-8")
    except orjson.JSONEncodeError:  # a TypeError, as json.dumps raises for what it cannot write
        import json

        return json.dumps(doc, indent=2, default=str, ensure_ascii=True)
    # Outside printable ASCII: only ever inside a string of the document, escaped as ensure_ascii does.
    return text if text.isascii() and "\x7f" not in text else _beyond_ascii().sub(_escaped, text)


@cache
def _beyond_ascii() -> re.Pattern[str]:
    return re.compile("[^\x00-\x7e]")


def _escaped(m: re.Match[str]) -> str:
    """One character as ensure_ascii writes it: ``\\u00e9``, a surrogate pair past the basic plane."""
    n = ord(m.group())
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 | (n >> 10):04x}\\u{0xDC00 | (n & 0x3FF):04x}"


def progress_enabled() -> bool:
    """Progress is shown on a terminal's stderr, never in a CI job's log (a job may have one)."""
    return not _TERMINAL.on_ci and _is_tty(sys.stderr) and _console("stderr").is_terminal


_TEE_BROKEN: list[bool] = [False]


def tee_stderr(chunk: bytes) -> None:
    """A job's output as it comes, on stderr as the job wrote it (stdout keeps our one result);
    a closed stderr stops the tee, never the job."""
    if _TEE_BROKEN[0]:
        return
    try:
        sys.stderr.flush()
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
    except (OSError, ValueError, AttributeError):
        _TEE_BROKEN[0] = True
