"""``[[ci.groups]]`` of ``vimesync.toml``: how ``sop record ci`` counts CI jobs by step::

    [[ci.groups]]
    name = "CPU checks"
    match = ["cpu-.*", "lint"]      # RE2, each matched in full against a job's labels
    required = true                 # not all green: the ci gate fails

A job's labels are its Buildkite group key, step key and name, or a GitHub check run's workflow
and ``workflow / name``; it counts in the first group one of whose patterns matches one of them.
The file is repository content: every value is bounded and every pattern compiled by RE2 here,
so a bad pattern is a config error naming the group, never a hang or a traceback later."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.config.values import CONTROL
from vimesync.errors import ConfigError

MAX_GROUPS = 50  # configured groups
MAX_PATTERNS = 50  # patterns of one group
MAX_PATTERN = 200  # characters of one pattern
MAX_GROUP_NAME = 80  # characters of a group's name
_KEYS = frozenset({"name", "match", "required"})


@dataclass(frozen=True)
class GroupRule:
    """One configured group: its name, the RE2 patterns that select its jobs, and whether it
    must be all green for the ci gate to hold."""

    name: str
    match: tuple[str, ...]
    required: bool = False


def ci_groups(path: Path, raw: Any) -> tuple[GroupRule, ...]:
    """``[[ci.groups]]`` checked (ConfigError naming the group and the key otherwise)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        raise ConfigError(str(path), "[ci] groups must be an array of tables ([[ci.groups]])")
    if len(raw) > MAX_GROUPS:
        raise ConfigError(str(path), f"[ci] groups: at most {MAX_GROUPS} groups (it holds {len(raw):,})")
    rules: list[GroupRule] = []
    for i, g in enumerate(raw, 1):
        where = f"[[ci.groups]] #{i}"
        unknown = sorted(k for k in g if k not in _KEYS)
        if unknown:
            raise ConfigError(str(path), f"{where}: unknown key {unknown[0][:40]!r} (name, match, required)")
        name = g.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= MAX_GROUP_NAME or CONTROL.search(name):
            raise ConfigError(str(path), f"{where} name must be one line of 1-{MAX_GROUP_NAME} characters")
        if any(r.name == name for r in rules):
            raise ConfigError(str(path), f"{where}: a second group named {name!r}")
        required = g.get("required", False)
        if not isinstance(required, bool):
            raise ConfigError(str(path), f"{where} required must be true or false")
        rules.append(GroupRule(name, _patterns(path, where, g.get("match")), required))
    return tuple(rules)


def _patterns(path: Path, where: str, match: Any) -> tuple[str, ...]:
    from vimesync.regex import compile_re2

    if not isinstance(match, list) or not 0 < len(match) <= MAX_PATTERNS:
        raise ConfigError(str(path), f"{where} match must be a list of 1-{MAX_PATTERNS} patterns")
    for p in match:
        if not isinstance(p, str) or not 0 < len(p) <= MAX_PATTERN or CONTROL.search(p):
            raise ConfigError(
                str(path), f"{where} match: each pattern is one line of 1-{MAX_PATTERN} characters"
            )
        try:
            compile_re2(p)
        except ValueError as exc:
            raise ConfigError(str(path), f"{where} match {p[:60]!r}: not an RE2 pattern ({exc})") from None
    return tuple(match)
