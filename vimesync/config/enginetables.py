"""The engines a config names: one ``[engine]`` table or ``[[engine]]`` tables (each with a unique
``name``), each read with its pin; and the one ``--engine NAME`` selects.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from vimesync.config.files import confined
from vimesync.config.model import Config, EnginePin
from vimesync.config.pinfiles import load_engine_pin, source_or_package
from vimesync.config.values import CONTROL, KNOWN_KEYS, check_keys, file_or_none, str_or_none
from vimesync.errors import ConfigError
from vimesync.readers import Reader
from vimesync.safefs import excerpt

MAX_ENGINES = 32


def load_engines(path: Path, value: Any, root: Path, reader: Reader) -> tuple[EnginePin, ...]:
    """``[engine]`` (one engine) or ``[[engine]]`` (several, each with a unique ``name``)."""
    if isinstance(value, dict):
        check_keys(path, "engine", value, set(KNOWN_KEYS["vimesync.toml [engine]"]))
        pin = _engine(path, "engine", value, root, reader)
        return (pin,) if pin.configured else ()
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ConfigError(str(path), "engine must be one [engine] table or [[engine]] tables")
    if len(value) > MAX_ENGINES:
        raise ConfigError(str(path), f"more than {MAX_ENGINES} [[engine]] tables")
    engines: list[EnginePin] = []
    seen: set[str] = set()
    for i, table in enumerate(value, 1):
        where = f"engine {i}"
        check_keys(path, where, table, set(KNOWN_KEYS["vimesync.toml [[engine]]"]))
        key = str_or_none(path, where, table, "name")
        if not key or not key.strip():
            raise ConfigError(str(path), f"[[engine]] number {i} needs a name (used by --engine)")
        if CONTROL.search(key):
            raise ConfigError(str(path), f"[[engine]] number {i}: name must not contain control characters")
        if key.casefold() in seen:
            raise ConfigError(str(path), f"two [[engine]] tables are named {excerpt(key)}")
        seen.add(key.casefold())
        pin = _engine(path, f"engine {excerpt(key)}", table, root, reader)
        name = pin.name if pin.file is not None and pin.name != "engine" else key
        engines.append(replace(pin, key=key, name=name))
    return tuple(engines)


def _engine(path: Path, table: str, eng: dict[str, Any], root: Path, reader: Reader) -> EnginePin:
    """One engine: its pin, with the config's machine-local ``source`` filling a pin that has none.
    Files it names may lie anywhere inside the repository ``root``."""
    pin_file = confined(root, file_or_none(path, table, eng, "pin"), file=path, key=f"[{table}] pin")
    pin = load_engine_pin(pin_file, reader) if pin_file else EnginePin()
    if pin.file is not None and pin.series is not None:
        confined(root, pin.series, file=pin.file, key="[engine] series")
        reader.kind(pin.series, root=root)  # a symlink there (or on the way) is refused now
    source, package = source_or_package(path, table, eng)
    if pin.source is not None or pin.package is not None:
        return pin
    if source is not None:
        return replace(pin, source=source, source_origin=(path, f"[{table}] source"))
    if package is not None:
        return replace(pin, package=package)
    return pin


def select_engine(config: Config, name: str) -> EnginePin:
    """The engine ``--engine NAME`` names (its config name or its pin's display name, any case)."""
    engines = config.engines
    where = str(config.file) if config.file else "no vimesync.toml"
    found = [p for p in engines if name.casefold() in {(p.key or p.name).casefold(), p.name.casefold()}]
    if len(found) > 1:  # one's name, another's pin name: the flag (and its --source) must not guess
        raise ConfigError(
            where,
            f"--engine {excerpt(name)} names {len(found)} engines"
            f" ({', '.join(excerpt(p.key or p.name) for p in found)}): rename one of them",
        )
    if found:
        return found[0]
    known = ", ".join(excerpt(p.key or p.name) for p in engines) or "none"
    raise ConfigError(where, f"no engine named {excerpt(name)}", hint=f"engines in the config: {known}")
