"""The config's arrays of tables, ``[[upstream.translate]]`` and ``[[upstream.verify]]``: each
table checked and kept as written, with the line of its header (compiled elsewhere:
vimesync.upstream.translate, vimesync.audit.verify).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vimesync.config.model import TranslateSpec, VerifySpec
from vimesync.config.values import KNOWN_KEYS
from vimesync.errors import ConfigError
from vimesync.safefs import excerpt


def _array_header(table: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*\[\[[ \t]*upstream[ \t]*\.[ \t]*{table}[ \t]*\]\]", re.M)


_TRANSLATE_HEADER = _array_header("translate")
_VERIFY_HEADER = _array_header("verify")
MAX_TRANSLATIONS = 64
MAX_VERIFY = 64  # [[upstream.verify]] tables, as many as translations
VERIFY_MUST = ("not-match", "match")
MAX_TRANSLATE_GLOBS = 64  # globs per [[upstream.translate]] table (a policy rule's cap)


def _header_lines(text: str, wanted: int, header: re.Pattern[str] = _TRANSLATE_HEADER) -> list[int]:
    """The 1-based lines of the first ``wanted`` ``[[upstream.translate]]`` (or ``header``)
    headers, counted in one pass (counting from the start for each header was quadratic: a 1 MiB
    config of header-looking lines took seconds)."""
    lines: list[int] = []
    line, at = 1, 0
    for m in header.finditer(text):
        if len(lines) >= wanted:
            break
        line += text.count("\n", at, m.start())
        at = m.start()
        lines.append(line)
    return lines


def translations(path: Path, text: str, raw: Any) -> tuple[TranslateSpec, ...]:
    """The ``[[upstream.translate]]`` tables, each with the line of its header; ConfigError naming
    the file and line for a table that is not ``pattern``/``replace`` strings and ``paths`` globs."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(str(path), "[upstream] translate must be [[upstream.translate]] tables")
    if len(raw) > MAX_TRANSLATIONS:
        raise ConfigError(str(path), f"more than {MAX_TRANSLATIONS} [[upstream.translate]] tables")
    lines = _header_lines(text, len(raw))
    out = []
    for i, table in enumerate(raw):
        line = lines[i] if i < len(lines) else None
        unknown = sorted(set(table) - KNOWN_KEYS["vimesync.toml [[upstream.translate]]"])
        if unknown:
            raise ConfigError(
                str(path), f"unknown key {excerpt(unknown[0])} in [[upstream.translate]]", line=line
            )
        for key in ("pattern", "replace"):
            if not isinstance(table.get(key), str):
                raise ConfigError(str(path), f"[[upstream.translate]] {key} must be a string", line=line)
        globs = table.get("paths")
        if globs is not None and (
            not isinstance(globs, list) or not globs or not all(isinstance(g, str) for g in globs)
        ):
            raise ConfigError(str(path), "[[upstream.translate]] paths must be a list of globs", line=line)
        if globs is not None and (len(globs) > MAX_TRANSLATE_GLOBS or any(len(g) > 1000 for g in globs)):
            # As a policy rule's: RE2 compiles them as one set, which thousands of globs overflow.
            raise ConfigError(
                str(path),
                f"[[upstream.translate]] paths: at most {MAX_TRANSLATE_GLOBS} globs of 1,000 characters",
                line=line,
            )
        out.append(
            TranslateSpec(
                pattern=table["pattern"],
                replace=table["replace"],
                paths=tuple(globs) if globs is not None else None,
                line=line,
            )
        )
    return tuple(out)


def verifications(path: Path, text: str, raw: Any) -> tuple[VerifySpec, ...]:
    """The ``[[upstream.verify]]`` tables, each with the line of its header; ConfigError naming
    the file and line for a table that is not a ``pattern`` string, ``paths`` globs and ``must``."""
    if raw is None:
        return ()
    what = "[[upstream.verify]]"
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(str(path), f"[upstream] verify must be {what} tables")
    if len(raw) > MAX_VERIFY:
        raise ConfigError(str(path), f"more than {MAX_VERIFY} {what} tables")
    lines = _header_lines(text, len(raw), _VERIFY_HEADER)
    out = []
    for i, table in enumerate(raw):
        line = lines[i] if i < len(lines) else None
        unknown = sorted(set(table) - KNOWN_KEYS["vimesync.toml [[upstream.verify]]"])
        if unknown:
            raise ConfigError(str(path), f"unknown key {excerpt(unknown[0])} in {what}", line=line)
        if not isinstance(table.get("pattern"), str) or not table["pattern"]:
            raise ConfigError(str(path), f"{what} pattern must be a non-empty string", line=line)
        must = table.get("must", "not-match")
        if must not in VERIFY_MUST:
            raise ConfigError(
                str(path), f'{what} must is {excerpt(str(must))}: expected "not-match" or "match"', line=line
            )
        globs = table.get("paths")
        if globs is not None and (
            not isinstance(globs, list) or not globs or not all(isinstance(g, str) for g in globs)
        ):
            raise ConfigError(str(path), f"{what} paths must be a list of globs", line=line)
        if globs is not None and (len(globs) > MAX_TRANSLATE_GLOBS or any(len(g) > 1000 for g in globs)):
            raise ConfigError(
                str(path), f"{what} paths: at most {MAX_TRANSLATE_GLOBS} globs of 1,000 characters", line=line
            )
        out.append(
            VerifySpec(
                pattern=table["pattern"],
                paths=tuple(globs) if globs is not None else None,
                must=must,
                line=line,
            )
        )
    return tuple(out)
