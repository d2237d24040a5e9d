"""``vimesync.toml`` read into a Config: every table checked, the files it names kept inside its
repository, its pins loaded; and ``--map``/``map`` pairs parsed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from vimesync.config.arrays import translations, verifications
from vimesync.config.cigroups import ci_groups
from vimesync.config.discovery import CONFIG_ENV, discover_config
from vimesync.config.enginetables import load_engines
from vimesync.config.files import confined, read_text
from vimesync.config.model import Config, EnginePin, UpstreamPin
from vimesync.config.pinfiles import load_upstream_pin
from vimesync.config.values import CONTROL, KNOWN_KEYS, check_keys, file_or_none, path_or_none, str_or_none
from vimesync.errors import ConfigError
from vimesync.pathmap import check_pair
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import excerpt, lexical, loads_toml


def parse_map(items: list[str] | tuple[str, ...], *, where: str = "--map") -> tuple[tuple[str, str], ...]:
    """``["slime/=vime/"]`` -> ``(("slime/", "vime/"),)``."""
    pairs = []
    for item in items:
        src, sep, dst = item.partition("=")
        if not sep:
            raise ConfigError(where, f"path map {excerpt(item)} must look like SRC=DST")
        check_pair(src, dst, where=where)
        pairs.append((src, dst))
    return tuple(pairs)


def locate_config(
    flag: Path | None, *, named_by_env: Path | None = None, cwd: Path
) -> tuple[Path | None, tuple[Path, ...]]:
    """Which config: ``--config``, else ``$VIMESYNC_CONFIG`` (``named_by_env``: the job's, trusted
    like a flag; it must exist), else the ``vimesync.toml`` discovered from ``cwd`` (see
    :func:`discover_config`); and the folders discovery looked in."""
    if flag is not None:
        return flag, ()
    if named_by_env is not None:
        if not os.path.lexists(named_by_env):
            raise ConfigError(str(named_by_env), f"no such file (named by ${CONFIG_ENV})")
        return named_by_env, ()
    return discover_config(cwd)


def load_config(
    path: Path | None = None,
    *,
    cwd: Path | None = None,
    engines: bool = True,
    named_by_env: Path | None = None,
    reader: Reader = WORKTREE,
) -> Config:
    """Load ``path`` (``--config``), else ``named_by_env`` (``$VIMESYNC_CONFIG``), else the
    discovered ``vimesync.toml`` (see :func:`locate_config`), else an empty Config that says where
    it looked. ``reader``: what the checkout holds (the working tree, or a commit).

    ``engines=False``: the engine pins are not read (a command that never uses the engine, such
    as ``walk``, runs whatever state they are in); the config has no engine then."""
    found, looked = locate_config(path, named_by_env=named_by_env, cwd=cwd or Path.cwd())
    if found is None:
        return Config(searched=looked)
    return read_config(found, reader=reader, engines=engines)


def read_config(path: Path, *, reader: Reader = WORKTREE, engines: bool = True) -> Config:
    """The config file ``path`` as ``reader`` holds it, its pins read the same way."""
    path = lexical(path)
    text = read_text(path, reader=reader)
    data = loads_toml(text, where=str(path))
    check_keys(path, "<top>", data, set(KNOWN_KEYS["vimesync.toml"]))
    up = data.get("upstream", {})
    check_keys(path, "upstream", up, set(KNOWN_KEYS["vimesync.toml [upstream]"]))
    down = data.get("downstream", {})
    check_keys(path, "downstream", down, set(KNOWN_KEYS["vimesync.toml [downstream]"]))
    ci = data.get("ci", {})
    if not isinstance(ci, dict):
        raise ConfigError(str(path), "[ci] must be a table")
    check_keys(path, "ci", ci, set(KNOWN_KEYS["vimesync.toml [ci]"]))
    required = ci.get("required", [])
    if (
        not isinstance(required, list)
        or len(required) > 100
        or not all(isinstance(c, str) and 0 < len(c) <= 255 for c in required)
    ):
        raise ConfigError(str(path), "[ci] required must be a list of at most 100 CI context names")
    if any(CONTROL.search(c) for c in required):
        raise ConfigError(str(path), "[ci] required: a context name holds a control character")
    buildkite = str_or_none(path, "ci", ci, "buildkite")
    slug = r"[a-z0-9][a-z0-9-]{0,99}"
    if buildkite is not None and not re.fullmatch(f"{slug}/{slug}", buildkite):
        raise ConfigError(str(path), "[ci] buildkite must be org/pipeline (Buildkite slugs)")
    # Files the config names may lie anywhere inside its repository (a config kept in ci/ may
    # name pins/ at the root), never outside it.
    root = reader.repository_root(path)
    up_pin_file = confined(root, file_or_none(path, "upstream", up, "pin"), file=path, key="[upstream] pin")
    raw_map = up.get("map", [])
    if not isinstance(raw_map, list) or not all(isinstance(m, str) for m in raw_map):
        raise ConfigError(str(path), "[upstream] map must be a list of 'SRC=DST' strings")
    upstream_path = path_or_none(path, "upstream", up, "path")
    downstream_path = path_or_none(path, "downstream", down, "path")
    pins = load_engines(path, data.get("engine", {}), root, reader) if engines else ()
    engine = pins[0] if pins else EnginePin()
    origins = [("upstream_path", path, "[upstream] path")] if upstream_path else []
    origins += [("downstream_path", path, "[downstream] path")] if downstream_path else []
    if engine.source_origin is not None:
        origins.append(("engine_source", *engine.source_origin))
    return Config(
        file=path,
        upstream_name=str_or_none(path, "upstream", up, "name") or "upstream",
        upstream_repo=str_or_none(path, "upstream", up, "repo"),
        upstream_path=upstream_path,
        upstream_branch=str_or_none(path, "upstream", up, "branch"),
        upstream_pin=load_upstream_pin(up_pin_file, reader) if up_pin_file else UpstreamPin(),
        policy=confined(
            root, file_or_none(path, "upstream", up, "policy"), file=path, key="[upstream] policy"
        ),
        path_map=parse_map(raw_map, where=str(path)),
        translate=translations(path, text, up.get("translate")),
        verify=verifications(path, text, up.get("verify")),
        downstream_path=downstream_path,
        downstream_name=str_or_none(path, "downstream", down, "name") or "",
        engines=pins,
        path_origins=tuple(origins),
        ci_repo=str_or_none(path, "ci", ci, "repo"),
        ci_required=tuple(required),
        ci_buildkite=buildkite,
        ci_groups=ci_groups(path, ci.get("groups")),
    )
