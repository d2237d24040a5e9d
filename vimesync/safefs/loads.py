"""TOML and JSON from untrusted files, bounded: nesting, dotted key parts and integer sizes are
capped before (TOML) or after (JSON) parsing, and every error is a ConfigError naming the file."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from vimesync.errors import ConfigError

MAX_NESTING = 64  # TOML/JSON arrays and tables; real files use fewer than 5 levels


# One left-to-right pass over TOML tokens (strings and comments skipped, brackets counted, dots
# counted per key) before tomllib sees the text: tomllib recurses once per nesting level, and its
# work per dotted key or table name grows with the square of the parts (80 KB of ``a.a.a`` =
# 33 s). Each string token matches as soon as its opening quote does (an unterminated one runs to
# the end of its line or of the text), so no position is ever scanned twice; at an unterminated
# string the scan stops, since tomllib rejects the text there before reading any further.
_TOML_SCAN = re.compile(
    r"""
      (?P<open>[\[{])
    | (?P<close>[\]}])
    | (?P<dot>\.)
    | [=,\n]+
    | \#[^\n]*
    | \"\"\"(?:[^"\\]|\\.|""?(?!"))*(?P<ml>"{3,5})?
    | '''(?:[^']|''?(?!'))*(?P<mll>'{3,5})?
    | "(?:[^"\\\n]|\\[^\n])*(?P<basic>")?
    | '[^'\n]*(?P<literal>')?
    """,
    re.VERBOSE | re.DOTALL,
)
_STRING_ENDS = ("ml", "mll", "basic", "literal")
MAX_KEY_PARTS = 32  # ``a.b.c = 1`` has 3; real keys and table names have fewer than 6


def _toml_shape_error(text: str) -> str | None:
    """Why tomllib must not see ``text`` (nested too deep, a key of too many parts), or None."""
    depth = dots = 0
    for m in _TOML_SCAN.finditer(text):
        kind = m.lastgroup
        if kind == "dot":  # a float or a time has one; only a key has more between delimiters
            dots += 1
            if dots >= MAX_KEY_PARTS:
                return f"a key or table name has more than {MAX_KEY_PARTS} dotted parts"
            continue
        if kind == "open":
            depth += 1
            if depth > MAX_NESTING:
                return f"nested deeper than {MAX_NESTING} levels"
        elif kind == "close":
            depth = max(0, depth - 1)
        elif m.group()[0] in "\"'":
            if kind not in _STRING_ENDS:
                return None  # unterminated: tomllib stops at it
            continue  # a quoted key part: ``"a"."b"`` keeps counting dots
        dots = 0
    return None


def _toml_message(exc: Exception) -> tuple[str, int | None]:
    """The message and line of a TOMLDecodeError (3.11 puts the line only in the text). tomllib's
    messages name a character at most (``Illegal character '\\n'``), never a line of the file."""
    line = getattr(exc, "lineno", None)
    msg, _, at = str(exc).partition(" (at line ")
    if line is None and at:
        digits = at.split(",")[0]
        line = int(digits) if digits.isdigit() and len(digits) < 12 else None
    # Some messages quote a key ("Cannot declare ('a', 'b') twice"): keep them short and visible.
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in msg)
    return (shown[:120] + "…" if len(shown) > 120 else shown), line


def loads_toml(text: str, *, where: str) -> dict[str, Any]:
    """``tomllib.loads`` with bounded nesting and integers; ConfigError naming ``where``."""
    problem = _toml_shape_error(text)
    if problem:
        raise ConfigError(where, f"invalid TOML: {problem}")
    # Imported here: tomllib compiles its regular expressions on import (~5 ms), and a command
    # that reads no TOML (``patches check --source --series``) should not pay for them.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg, line = _toml_message(exc)
        raise ConfigError(where, f"invalid TOML: {msg}", line=line) from None
    except RecursionError:
        raise ConfigError(where, "invalid TOML: nested too deeply") from None
    except ValueError:  # int() over sys.get_int_max_str_digits() digits; its message has no content
        raise ConfigError(where, "invalid TOML: a number is too long") from None


def _json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether parsed JSON nests deeper than ``limit`` (iterative: no recursion, linear)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def loads_json(text: str, *, where: str) -> Any:
    """``json.loads`` with bounded nesting and integers; ConfigError naming ``where``. json's C
    scanner is linear and guards its recursion (a RecursionError past the interpreter's limit,
    never a crash), so it parses first and the nesting is checked on the result."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(where, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise ConfigError(where, f"invalid JSON: nested deeper than {MAX_NESTING} levels") from None
    except ValueError:
        raise ConfigError(where, "invalid JSON: a number is too long") from None
    if isinstance(data, (dict, list)) and _json_depth_exceeds(data, MAX_NESTING):
        raise ConfigError(where, f"invalid JSON: nested deeper than {MAX_NESTING} levels")
    return data
