"""The project config (``vimesync.toml``) and pin files (``pins/*.toml``).

Every value here also has a command-line flag; flags win. Relative paths are resolved
against the folder of the file that names them, so a config works from any cwd.

``vimesync.toml``::

    [upstream]
    name = "Slime"                  # display name in reports
    repo = "THUDM/slime"            # owner/name, for PR links and --github
    path = "../slime"               # a local clone or bare mirror
    branch = "main"                 # the tip when --range is not given
    pin = "pins/slime.toml"         # records the last-synced upstream commit
    policy = "sop/policy.toml"
    map = ["slime/=vime/"]          # upstream path prefix = downstream path prefix

    [downstream]
    path = "."

    [engine]
    pin = "pins/vllm.toml"
    source = "../vllm.git"          # optional: where the engine source lives on this machine

``pins/vllm.toml``::

    [engine]
    name = "vLLM"
    repo = "vllm-project/vllm"
    rev = "e9757321527ca1ecd514c07c1418dd2c53da3d19"
    series = "../patches/series"    # quilt series file
    strip = 1
    source = "../../vllm"           # optional: where the engine source lives on this machine
    python = "3.12"                 # optional: grammar target for parsing

``pins/slime.toml``::

    [upstream]
    repo = "THUDM/slime"
    synced = "8c17b676..."          # the last upstream commit carried downstream
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from vimesync.errors import ConfigError
from vimesync.safefs import (
    MAX_CONFIG_BYTES,
    excerpt,
    input_kind,
    lexical,
    loads_toml,
    read_text_input,
)

CONFIG_NAME = "vimesync.toml"


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """vimesync's cache folder (parse results, GitHub responses): ``$VIMESYNC_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/vimesync``, else ``~/.cache/vimesync``. From the job's environment only."""
    env = os.environ if env is None else env
    if env.get("VIMESYNC_CACHE_DIR"):
        return Path(env["VIMESYNC_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "vimesync"
    return Path.home() / ".cache" / "vimesync"


def read_text(path: Path, *, root: Path | None = None, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """A UTF-8 input file (config, pin, policy, metadata), read through ``safefs``: no symlink
    followed inside the repository, regular files only, at most ``max_bytes``. ConfigError naming
    it when unreadable; never any of its content."""
    return read_text_input(path, root=root, max_bytes=max_bytes)


def read_toml(path: Path, *, root: Path | None = None) -> dict[str, Any]:
    """Load a TOML file; ConfigError naming the file and line on any problem (nesting deeper than
    ``safefs.MAX_NESTING`` and over-long integers included)."""
    return loads_toml(read_text(path, root=root), where=str(path))


def _check_keys(path: Path, table: str, data: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            str(path),
            f"unknown key {excerpt(unknown[0])} in [{table}]",
            hint=f"known keys: {', '.join(sorted(allowed))}",
        )


def _typed(path: Path, table: str, key: str, value: Any, kind: type) -> Any:
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise ConfigError(str(path), f"[{table}] {key} must be a {kind.__name__}, not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class EnginePin:
    file: Path | None = None
    name: str = "engine"
    repo: str | None = None
    rev: str | None = None
    series: Path | None = None
    strip: int = 1
    source: Path | None = None
    python: str | None = None


@dataclass(frozen=True)
class UpstreamPin:
    file: Path | None = None
    repo: str | None = None
    synced: str | None = None


@dataclass(frozen=True)
class Config:
    file: Path | None = None
    upstream_name: str = "upstream"
    upstream_repo: str | None = None
    upstream_path: Path | None = None
    upstream_branch: str | None = None
    upstream_pin: UpstreamPin = field(default_factory=UpstreamPin)
    policy: Path | None = None
    path_map: tuple[tuple[str, str], ...] = ()
    downstream_path: Path | None = None
    engine: EnginePin = field(default_factory=EnginePin)
    ci_repo: str | None = None  # [ci] repo: where the downstream's CI reports (owner/name)
    ci_required: tuple[str, ...] = ()  # [ci] required: contexts that must be green at the head
    # Which file and key named each repository path above ("upstream_path", "downstream_path",
    # "engine_source"): those are repository content; vimesync.repopaths decides whether to trust them.
    path_origins: tuple[tuple[str, Path, str], ...] = ()


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _str_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> str | None:
    """A string value. Paths, revisions, branches and repositories never hold a control character
    (a NUL would reach git or the OS as a ValueError traceback); a display ``name`` may, shown
    escaped, but not a NUL."""
    if key not in data:
        return None
    value = str(_typed(path, table, key, data[key], str))
    if "\0" in value:
        raise ConfigError(str(path), f"[{table}] {key} must not contain a NUL character")
    if key != "name" and _CONTROL.search(value):
        what = "control characters (newline, tab, ESC...)"
        raise ConfigError(str(path), f"[{table}] {key} must not contain {what}")
    return value


def _path_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> Path | None:
    value = _str_or_none(path, table, data, key)
    # Lexical, never resolved: a symlink inside the checkout on the way is refused by
    # repopaths.repository_path, not followed here.
    return lexical(path.parent / value) if value is not None else None


def _file_or_none(path: Path, table: str, data: dict[str, Any], key: str) -> Path | None:
    """A repository file named by ``path``: made absolute lexically, never resolved, so that a
    symlink on the way is refused when the file is read (``safefs``) instead of followed here."""
    value = _str_or_none(path, table, data, key)
    return lexical(path.parent / value) if value is not None else None


def load_engine_pin(path: Path) -> EnginePin:
    data = read_toml(path)
    _check_keys(path, "<top>", data, {"engine"})
    eng = data.get("engine", {})
    _check_keys(path, "engine", eng, {f.name for f in fields(EnginePin)} - {"file"})
    strip = _typed(path, "engine", "strip", eng.get("strip", 1), int)
    if strip < 0:
        raise ConfigError(str(path), "[engine] strip must be >= 0")
    return EnginePin(
        file=path,
        name=_str_or_none(path, "engine", eng, "name") or "engine",
        repo=_str_or_none(path, "engine", eng, "repo"),
        rev=_str_or_none(path, "engine", eng, "rev"),
        series=_file_or_none(path, "engine", eng, "series"),
        strip=strip,
        source=_path_or_none(path, "engine", eng, "source"),
        python=_str_or_none(path, "engine", eng, "python"),
    )


def load_upstream_pin(path: Path) -> UpstreamPin:
    data = read_toml(path)
    _check_keys(path, "<top>", data, {"upstream"})
    up = data.get("upstream", {})
    _check_keys(path, "upstream", up, {"repo", "synced"})
    return UpstreamPin(
        file=path,
        repo=_str_or_none(path, "upstream", up, "repo"),
        synced=_str_or_none(path, "upstream", up, "synced"),
    )


def check_map_pair(src: str, dst: str, *, where: str) -> None:
    """ConfigError for an empty SRC or DST: an empty prefix matches every path, so ``=vime/``
    would claim the whole upstream tree for ``vime/`` (and ``slime/=`` the reverse)."""
    if not src.strip("/") or not dst.strip("/"):
        raise ConfigError(
            where,
            f"path map {excerpt(src + '=' + dst)}: SRC and DST must both name a path",
            hint="an empty prefix matches every path; give the folders, e.g. slime/=vime/",
        )


def parse_map(items: list[str] | tuple[str, ...], *, where: str = "--map") -> tuple[tuple[str, str], ...]:
    """``["slime/=vime/"]`` -> ``(("slime/", "vime/"),)``."""
    pairs = []
    for item in items:
        src, sep, dst = item.partition("=")
        if not sep:
            raise ConfigError(where, f"path map {excerpt(item)} must look like SRC=DST")
        check_map_pair(src, dst, where=where)
        pairs.append((src, dst))
    return tuple(pairs)


def load_config(path: Path | None = None, *, cwd: Path | None = None) -> Config:
    """Load ``path``, else ``vimesync.toml`` in ``cwd`` if present, else an empty Config."""
    if path is None:
        candidate = (cwd or Path.cwd()) / CONFIG_NAME
        if not os.path.lexists(candidate):
            return Config()
        path = candidate
    path = lexical(path)
    data = read_toml(path)
    _check_keys(path, "<top>", data, {"upstream", "downstream", "engine", "ci"})
    up = data.get("upstream", {})
    _check_keys(path, "upstream", up, {"name", "repo", "path", "branch", "pin", "policy", "map"})
    down = data.get("downstream", {})
    _check_keys(path, "downstream", down, {"path"})
    eng = data.get("engine", {})
    _check_keys(path, "engine", eng, {"pin", "source"})
    ci = data.get("ci", {})
    if not isinstance(ci, dict):
        raise ConfigError(str(path), "[ci] must be a table")
    _check_keys(path, "ci", ci, {"repo", "required"})
    required = ci.get("required", [])
    if (
        not isinstance(required, list)
        or len(required) > 100
        or not all(isinstance(c, str) and 0 < len(c) <= 255 for c in required)
    ):
        raise ConfigError(str(path), "[ci] required must be a list of at most 100 CI context names")
    if any(_CONTROL.search(c) for c in required):
        raise ConfigError(str(path), "[ci] required: a context name holds a control character")
    up_pin_file = confined(
        path.parent, _file_or_none(path, "upstream", up, "pin"), file=path, key="[upstream] pin"
    )
    eng_pin_file = _file_or_none(path, "engine", eng, "pin")
    raw_map = up.get("map", [])
    if not isinstance(raw_map, list) or not all(isinstance(m, str) for m in raw_map):
        raise ConfigError(str(path), "[upstream] map must be a list of 'SRC=DST' strings")
    upstream_path = _path_or_none(path, "upstream", up, "path")
    downstream_path = _path_or_none(path, "downstream", down, "path")
    engine, source_file = _engine(path, eng, eng_pin_file)
    origins = [("upstream_path", path, "[upstream] path")] if upstream_path else []
    origins += [("downstream_path", path, "[downstream] path")] if downstream_path else []
    origins += [("engine_source", source_file, "[engine] source")] if source_file else []
    return Config(
        file=path,
        upstream_name=_str_or_none(path, "upstream", up, "name") or "upstream",
        upstream_repo=_str_or_none(path, "upstream", up, "repo"),
        upstream_path=upstream_path,
        upstream_branch=_str_or_none(path, "upstream", up, "branch"),
        upstream_pin=load_upstream_pin(up_pin_file) if up_pin_file else UpstreamPin(),
        policy=confined(
            path.parent, _file_or_none(path, "upstream", up, "policy"), file=path, key="[upstream] policy"
        ),
        path_map=parse_map(raw_map, where=str(path)),
        downstream_path=downstream_path,
        engine=engine,
        path_origins=tuple(origins),
        ci_repo=_str_or_none(path, "ci", ci, "repo"),
        ci_required=tuple(required),
    )


def confined(root: Path, target: Path | None, *, file: Path, key: str) -> Path | None:
    """``target`` (made absolute, never resolved) if it lies inside ``root``, else ConfigError.

    Pins, policies and series files are committed, so a pull request can edit them: a path
    they name must stay inside the repository, or an untrusted change could point the check at
    any file on the CI machine and have parts of it echoed in a diagnostic. The check is
    lexical: symlinks are not resolved here but refused when the file is read (``safefs``)."""
    if target is None:
        return None
    real = lexical(target)
    if not real.is_relative_to(lexical(root)):
        raise ConfigError(
            str(file),
            f"{key} must be inside {root} (the folder holding {CONFIG_NAME})",
            hint="pins, policies and series files are repository content; keep them in the repository",
        )
    return real


def _engine(path: Path, eng: dict[str, Any], pin_file: Path | None) -> tuple[EnginePin, Path | None]:
    """The engine pin, with the config's machine-local ``source`` filling a pin that has none,
    and the file that named the source."""
    root = path.parent
    pin_file = confined(root, pin_file, file=path, key="[engine] pin")
    pin = load_engine_pin(pin_file) if pin_file else EnginePin()
    if pin.file is not None and pin.series is not None:
        confined(root, pin.series, file=pin.file, key="[engine] series")
        input_kind(pin.series, root=root)  # a symlink there (or on the way) is refused now
    source = _path_or_none(path, "engine", eng, "source")
    if pin.source is not None:
        return pin, pin.file
    if source is not None:
        return replace(pin, source=source), path
    return pin, None
