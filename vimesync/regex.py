"""RE2, the one way vimesync compiles a pattern someone else wrote (policy titles, translations,
verify rules): linear-time matching, so a config or policy in a pull request cannot hang the gate,
and one error shape for a pattern RE2 refuses."""

from __future__ import annotations

from typing import Any


def compile_re2(pattern: str | bytes) -> Any:
    """The compiled pattern; ValueError with RE2's reason (never a traceback of RE2's, nor its own
    copy of the error on stderr) when it is not RE2 syntax or cannot be encoded."""
    import re2  # only when a pattern is compiled (a few ms at start-up otherwise)

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of the error on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(str(reason)) from None
    except (TypeError, ValueError, UnicodeError) as exc:  # e.g. a lone surrogate
        raise ValueError(str(exc)) from None
