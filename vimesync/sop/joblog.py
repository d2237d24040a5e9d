"""A job's output as ``sop record run -- CMD`` keeps it: every byte hashed (sha256) and counted,
handed on to a tee (the terminal) as it comes, and only the last :data:`TAIL_BYTES` kept, so a job
writing gigabytes costs no more memory than one writing a line.

What is stored of it (:meth:`JobLog.tail_lines`) is its last lines with secrets masked by name, as
the job's environment drops them: the value of every variable whose name holds one of
:data:`vimesync.settings.SECRET_WORDS`, and whatever follows ``NAME=`` or ``NAME:`` for such a
name in the text itself. A line cut by the tail's start is dropped (half a secret is not masked
by its value). Lines are decoded as UTF-8 (what is not UTF-8 shown as U+FFFD), escapes removed,
control characters replaced, each cut to :data:`vimesync.sop.measured.MAX_LINE` characters."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

from vimesync.settings import SECRET_WORDS
from vimesync.sop.measured import MAX_LINE, MAX_TAIL_LINES

TAIL_BYTES = 64 * 1024  # of the output kept in memory (for the tail and --expect-output)
MIN_SECRET = 4  # shorter values are not masked by value (they would mask ordinary words)
MASK = "***"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_WORDS = "|".join(SECRET_WORDS)
_NAMED = re.compile(
    rf"(?i)(\b[A-Z0-9_.-]*(?:{_WORDS}|API_?KEY|PASSWD|AUTH)[A-Z0-9_.-]*\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)(\S+)")


class JobLog:
    """The sink of a followed run (:func:`vimesync.procrun.follow`)."""

    def __init__(self, tee: Callable[[bytes], None] | None = None) -> None:
        self.tee = tee
        self.digest = hashlib.sha256()
        self.size = 0
        self.tail = bytearray()

    def __call__(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.size += len(chunk)
        self.tail += chunk
        if len(self.tail) > 2 * TAIL_BYTES:  # trimmed now and then, not on every chunk
            del self.tail[: len(self.tail) - TAIL_BYTES]
        if self.tee is not None:
            self.tee(chunk)

    @property
    def sha256(self) -> str:
        return self.digest.hexdigest()

    def kept(self) -> bytes:
        """The kept end of the output (its last :data:`TAIL_BYTES`), as the job wrote it."""
        return bytes(self.tail[-TAIL_BYTES:])

    def text(self) -> str:
        """The kept end of the output, decoded (unmasked: for ``--expect-output`` only)."""
        return self.kept().decode("utf-8", "replace")

    def tail_lines(self, secrets: Iterable[str]) -> tuple[str, ...]:
        """The last lines of the output, masked and cleaned (see the module)."""
        text = self.text()
        lines = text.splitlines()
        if self.size > TAIL_BYTES and lines:
            lines = lines[1:]  # cut by the tail's start
        return tuple(clean(mask(line, secrets)) for line in lines[-MAX_TAIL_LINES:])


def secret_values(environ: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The values of the variables named like secrets, longest first (one that holds another is
    masked whole)."""
    values = {v for k, v in environ if any(w in k.upper() for w in SECRET_WORDS) and len(v) >= MIN_SECRET}
    return tuple(sorted(values, key=len, reverse=True))


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret value, and what follows a secret's name, as ``***``."""
    for value in secrets:
        text = text.replace(value, MASK)
    text = _BEARER.sub(lambda m: m[1] + MASK, text)
    return _NAMED.sub(lambda m: m[1] + MASK, text)


def clean(line: str) -> str:
    """One stored line: escapes removed, control characters as ``?``, cut."""
    line = _CONTROL.sub("?", _ANSI.sub("", line.replace("\t", "    "))).rstrip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
