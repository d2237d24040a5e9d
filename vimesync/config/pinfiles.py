"""The pin files: an engine pin (``[engine]``: revision, series, source or ``pypi:`` package,
applier) and the upstream pin (``[upstream]``: the last-synced commit).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vimesync.config.files import read_toml
from vimesync.config.model import APPLIERS, DEFAULT_FUZZ, EnginePin, UpstreamPin
from vimesync.config.values import KNOWN_KEYS, check_keys, file_or_none, path_or_none, str_or_none, typed
from vimesync.errors import ConfigError
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import excerpt

PYPI_PREFIX = "pypi:"
# A requirement a pypi: source may name: a project name, "==" and an exact version, nothing else
# (no URL, no option, no marker, no wildcard: pip sees exactly one pinned distribution).
_REQUIREMENT = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?)==(?P<version>[0-9][A-Za-z0-9.+!_]{0,62})"
)
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_PIN_KEYS = set(KNOWN_KEYS["engine pin [engine]"])


def pypi_requirement(value: str, *, where: str, key: str) -> str:
    """``vllm==0.32.0`` from ``pypi:vllm==0.32.0``: a name, ``==`` and an exact version only (no
    URL, option, ``-`` prefix, marker or wildcard); ConfigError naming ``where`` and ``key``."""
    req = value.removeprefix(PYPI_PREFIX)
    if not _REQUIREMENT.fullmatch(req):
        raise ConfigError(
            where,
            f"{key} {excerpt(value)} is not a pinned package (pypi:NAME==VERSION)",
            hint='write pypi:NAME==VERSION, e.g. "pypi:vllm==0.32.0" (an exact version, nothing else)',
        )
    return req


def source_or_package(path: Path, table: str, data: dict[str, Any]) -> tuple[Path | None, str | None]:
    """A ``source`` value: a location (made absolute lexically) or a ``pypi:`` package."""
    value = str_or_none(path, table, data, "source")
    if value is not None and value.startswith(PYPI_PREFIX):
        return None, pypi_requirement(value, where=str(path), key=f"[{table}] source")
    return path_or_none(path, table, data, "source"), None


def load_engine_pin(path: Path, reader: Reader = WORKTREE) -> EnginePin:
    data = read_toml(path, reader=reader)
    check_keys(path, "<top>", data, {"engine"})
    eng = data.get("engine", {})
    if not isinstance(eng, dict):
        raise ConfigError(str(path), "[engine] must be a table")
    check_keys(path, "engine", eng, _PIN_KEYS)
    strip = typed(path, "engine", "strip", eng.get("strip", 1), int)
    if strip < 0:
        raise ConfigError(str(path), "[engine] strip must be >= 0")
    sha256 = str_or_none(path, "engine", eng, "sha256")
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise ConfigError(str(path), "[engine] sha256 must be 64 hexadecimal digits")
    source, package = source_or_package(path, "engine", eng)
    applier = typed(path, "engine", "applier", eng.get("applier", "git"), str)
    if applier not in APPLIERS:
        raise ConfigError(str(path), f'[engine] applier must be "git" or "gnu-patch", not {excerpt(applier)}')
    fuzz = typed(path, "engine", "fuzz", eng.get("fuzz", DEFAULT_FUZZ), int)
    if fuzz < 0 or isinstance(fuzz, bool):
        raise ConfigError(str(path), "[engine] fuzz must be an integer >= 0")
    forward = typed(path, "engine", "forward", eng.get("forward", False), bool)
    if applier == "git" and ("fuzz" in eng or "forward" in eng):
        raise ConfigError(str(path), '[engine] fuzz and forward are GNU patch\'s: set applier = "gnu-patch"')
    return EnginePin(
        file=path,
        # Unnamed, the pin's file names it (pins/sglang.toml: "sglang"), never the word "engine".
        name=str_or_none(path, "engine", eng, "name") or path.stem,
        repo=str_or_none(path, "engine", eng, "repo"),
        rev=str_or_none(path, "engine", eng, "rev"),
        series=file_or_none(path, "engine", eng, "series"),
        strip=strip,
        source=source,
        python=str_or_none(path, "engine", eng, "python"),
        sha256=sha256.lower() if sha256 else None,
        package=package,
        source_origin=(path, "[engine] source") if source is not None else None,
        applier=applier,
        fuzz=fuzz,
        forward=forward,
    )


def load_upstream_pin(path: Path, reader: Reader = WORKTREE) -> UpstreamPin:
    data = read_toml(path, reader=reader)
    check_keys(path, "<top>", data, {"upstream"})
    up = data.get("upstream", {})
    check_keys(path, "upstream", up, set(KNOWN_KEYS["upstream pin [upstream]"]))
    return UpstreamPin(
        file=path,
        repo=str_or_none(path, "upstream", up, "repo"),
        synced=str_or_none(path, "upstream", up, "synced"),
    )
