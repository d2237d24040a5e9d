"""A TOML table's values checked: the keys each table accepts, values of the right type, strings
without control characters, paths made absolute lexically (never resolved). Every error is a
ConfigError naming the file and the table, never the value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vimesync.errors import ConfigError
from vimesync.safefs import excerpt, lexical

# Every key each file accepts, by table: the loaders check against these, and the docs test
# (tests/test_docs_config.py) that docs/config.md documents each one.
KNOWN_KEYS: dict[str, frozenset[str]] = {
    "vimesync.toml": frozenset({"upstream", "downstream", "engine", "ci"}),
    "vimesync.toml [upstream]": frozenset(
        {"name", "repo", "path", "branch", "pin", "policy", "map", "translate", "verify"}
    ),
    "vimesync.toml [[upstream.translate]]": frozenset({"pattern", "replace", "paths"}),
    "vimesync.toml [[upstream.verify]]": frozenset({"pattern", "paths", "must"}),
    "vimesync.toml [downstream]": frozenset({"name", "path"}),
    "vimesync.toml [ci]": frozenset({"repo", "required", "buildkite", "groups"}),
    "vimesync.toml [engine]": frozenset({"pin", "source"}),
    "vimesync.toml [[engine]]": frozenset({"name", "pin", "source"}),
    "engine pin [engine]": frozenset(
        {"name", "repo", "rev", "series", "strip", "source", "python", "sha256", "applier", "fuzz", "forward"}
    ),
    "upstream pin [upstream]": frozenset({"repo", "synced"}),
}


def check_keys(path: Path, table: str, data: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            str(path),
            f"unknown key {excerpt(unknown[0])} in [{table}]",
            hint=f"known keys: {', '.join(sorted(allowed))}",
        )


_KINDS = {int: "an integer", str: "a string", bool: "true or false", float: "a number", list: "an array"}


def typed(path: Path, table: str, key: str, value: Any, kind: type) -> Any:
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        got = _KINDS.get(type(value), type(value).__name__)
        raise ConfigError(str(path), f"[{table}] {key} must be {_KINDS.get(kind, kind.__name__)}, not {got}")
    return value


CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def str_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> str | None:
    """A string value. Paths, revisions, branches and repositories never hold a control character
    (a NUL would reach git or the OS as a ValueError traceback); a display ``name`` may, shown
    escaped, but not a NUL."""
    if key not in data:
        return None
    value = str(typed(path, table, key, data[key], str))
    if "\0" in value:
        raise ConfigError(str(path), f"[{table}] {key} must not contain a NUL character")
    if key != "name" and CONTROL.search(value):
        what = "control characters (newline, tab, ESC...)"
        raise ConfigError(str(path), f"[{table}] {key} must not contain {what}")
    return value


def path_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> Path | None:
    value = str_or_none(path, table, data, key)
    # Lexical, never resolved: a symlink inside the checkout on the way is refused by
    # repopaths.repository_path, not followed here.
    return lexical(path.parent / value) if value is not None else None


def file_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> Path | None:
    """A repository file named by ``path``: made absolute lexically, never resolved, so that a
    symlink on the way is refused when the file is read (``safefs``) instead of followed here."""
    value = str_or_none(path, table, data, key)
    return lexical(path.parent / value) if value is not None else None
