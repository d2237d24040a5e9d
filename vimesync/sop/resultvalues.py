"""What a record of ``sop/records/<sync>.toml`` may say, as a flag gives it or the file holds it:
names, one-line texts, durations, figures, digests (:mod:`vimesync.sop.results` reads and writes
the records with these)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from vimesync.errors import BadInput
from vimesync.sop.records import DIGEST

# A suite's or a run's name: words people write ("CPU regressions", "baked runtime image checks").
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+:/()#,-]{0,79}")
FIGURE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
# a figure a job wrote (sop record run --figures): "observed FD count"
FIGURE_NAME = re.compile(r"[A-Za-z](?:[A-Za-z0-9 _.()/%#:,+-]{0,78}[A-Za-z0-9_.()/%#:,+-])?")
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
MAX_VALUE = 200  # a figure's value, a test id
MAX_NOTE = 500
MAX_FIGURES = 20
MAX_COUNT = 100_000_000
MAX_SECONDS = 30 * 24 * 3600.0
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_DURATION = re.compile(r"(?:(\d{1,4})h)?(?:(\d{1,5})m)?(?:(\d{1,7}(?:\.\d{1,3})?)s)?")


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_name(value: str, what: str) -> str:
    if not NAME.fullmatch(value) or value != value.strip():
        raise BadInput(
            f"{what} {value[:60]!r}: expected 1-80 letters, digits, spaces and . _ + : / ( ) # , -"
            " (starting with a letter or digit)"
        )
    return value


def one_line(value: str, what: str, limit: int) -> str:
    if not value.strip() or len(value) > limit or UNPRINTABLE.search(value):
        raise BadInput(f"{what}: expected one line of at most {limit} characters, no control characters")
    return value.strip()


def parse_duration(text: str) -> float:
    """``4m03s``, ``1h2m``, ``45s``, ``2.5s`` or plain seconds (``243``) -> seconds."""
    m = _DURATION.fullmatch(text.strip())
    if text.strip() and not m:
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
    elif m and any(m.groups()):
        h, mins, s = m.groups()
        seconds = int(h or 0) * 3600 + int(mins or 0) * 60 + float(s or 0)
    else:
        seconds = -1.0
    if not 0 <= seconds <= MAX_SECONDS:
        raise BadInput(f"--duration {text[:40]!r}: expected a duration such as 4m03s, 1h2m, 45s or 243")
    return round(seconds, 3)


def format_duration(seconds: float) -> str:
    """243.0 -> ``4m03s``; under a minute ``12.5s``; over an hour ``1h02m03s``."""
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    whole = int(round(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def check_figures(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """``K=V`` flags -> ((K, V), ...), each key once."""
    if len(pairs) > MAX_FIGURES:
        raise BadInput(f"--figure: at most {MAX_FIGURES} figures per run")
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not FIGURE_KEY.fullmatch(key):
            raise BadInput(
                f"--figure {pair[:60]!r}: expected KEY=VALUE, KEY a letter then letters, digits, _ . -"
            )
        if key in out:
            raise BadInput(f"--figure {key}: given twice")
        out[key] = one_line(value, f"--figure {key}", MAX_VALUE)
    return tuple(out.items())


def check_digest(value: str | None, what: str = "--image") -> str:
    if value is None:
        return ""
    if not DIGEST.fullmatch(value):
        raise BadInput(f"{what} {value[:80]!r}: expected sha256: and 64 lowercase hex digits")
    return value
