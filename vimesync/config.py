"""The project config (``vimesync.toml``) and pin files (``pins/*.toml``).

Every value here also has a command-line flag; flags win. Relative paths are resolved
against the folder of the file that names them, so a config works from any cwd.

Which config (like git, ruff, pre-commit): ``--config FILE``, else ``$VIMESYNC_CONFIG``, else the
first ``vimesync.toml`` from the current folder upward to the repository root (the folder holding
``.git``; outside a repository, the current folder only). Every key is documented in docs/config.md.

``vimesync.toml``::

    [upstream]
    name = "Slime"                  # display name in reports
    repo = "THUDM/slime"            # owner/name, for PR links and --github
    path = "../slime"               # a local clone or bare mirror
    branch = "main"                 # the tip when --range is not given
    pin = "pins/slime.toml"         # records the last-synced upstream commit
    policy = "sop/policy.toml"
    map = ["slime/=vime/"]          # upstream folder = its downstream name (pathmap.py)

    [[upstream.translate]]          # content rewrites `vimesync carry` applies (upstream/translate.py)
    pattern = '\\b(from|import) slime\\b'
    replace = '\\1 vime'
    paths = ["**/*.py"]             # optional: gitignore globs on the downstream path

    [downstream]
    path = "."

    [engine]
    pin = "pins/vllm.toml"
    source = "../vllm.git"          # optional: where the engine source lives on this machine

    # or several engines, each with a name (``--engine NAME`` picks one):
    [[engine]]
    name = "sglang"
    pin = "pins/sglang.toml"
    [[engine]]
    name = "megatron"
    pin = "pins/megatron.toml"

``pins/vllm.toml``::

    [engine]
    name = "vLLM"
    repo = "vllm-project/vllm"
    rev = "e9757321527ca1ecd514c07c1418dd2c53da3d19"
    series = "../patches/series"    # quilt series file
    strip = 1
    source = "../../vllm"           # optional: where the engine source lives on this machine
    python = "3.12"                 # optional: grammar target for parsing

    # an archive pin: a wheel/sdist file, or a package fetched once into the cache
    source = "pypi:vllm==0.32.0"    # pip download --no-deps --only-binary=:all: (wheels only)
    sha256 = "9f86d081..."          # required for a pypi: source; checked before use

``pins/slime.toml``::

    [upstream]
    repo = "THUDM/slime"
    synced = "8c17b676..."          # the last upstream commit carried downstream
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vimesync.errors import BadInput, ConfigError
from vimesync.pathmap import check_pair
from vimesync.safefs import (
    MAX_CONFIG_BYTES,
    excerpt,
    find_root,
    input_kind,
    lexical,
    loads_toml,
    read_text_input,
)

CONFIG_NAME = "vimesync.toml"
CONFIG_ENV = "VIMESYNC_CONFIG"  # set by the job (trusted, like a flag)


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


_KINDS = {int: "an integer", str: "a string", bool: "true or false", float: "a number", list: "an array"}


def _typed(path: Path, table: str, key: str, value: Any, kind: type) -> Any:
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        got = _KINDS.get(type(value), type(value).__name__)
        raise ConfigError(str(path), f"[{table}] {key} must be {_KINDS.get(kind, kind.__name__)}, not {got}")
    return value


APPLIERS = ("git", "gnu-patch")  # patches.model.Applier
DEFAULT_FUZZ = 2  # GNU patch's default maximum fuzz factor


@dataclass(frozen=True)
class EnginePin:
    file: Path | None = None
    name: str = ""  # display name; "" when no pin names one (see check.model.engine_name)
    repo: str | None = None
    rev: str | None = None
    series: Path | None = None
    strip: int = 1
    source: Path | None = None
    python: str | None = None
    sha256: str | None = None  # of an archive source (wheel/sdist), lower-case hex
    package: str | None = None  # "vllm==0.32.0", from ``source = "pypi:vllm==0.32.0"``
    key: str | None = None  # the ``[[engine]] name`` that selects it (``--engine NAME``)
    # The file and key that named ``source`` (repository content: see vimesync.repopaths).
    source_origin: tuple[Path, str] | None = None
    # Whose semantics apply the stack: git apply's, or GNU patch's with a fuzz factor and --forward
    # (check.model turns them into a patches.model.ApplyMode; config comes before patches).
    applier: str = "git"
    fuzz: int = DEFAULT_FUZZ
    forward: bool = False

    @property
    def configured(self) -> bool:
        return self.file is not None or self.source is not None or self.package is not None


@dataclass(frozen=True)
class UpstreamPin:
    file: Path | None = None
    repo: str | None = None
    synced: str | None = None


@dataclass(frozen=True)
class TranslateSpec:
    """One ``[[upstream.translate]]`` table: a content rewrite applied to carried upstream files."""

    pattern: str
    replace: str
    paths: tuple[str, ...] | None  # gitignore globs on the downstream path; None: every text file
    line: int | None  # of its table header in the config file


@dataclass(frozen=True)
class VerifySpec:
    """One ``[[upstream.verify]]`` table (Copybara's ``verify_match``): what the head's files
    must not (or must) contain after the translations."""

    pattern: str
    paths: tuple[str, ...] | None  # gitignore globs on the downstream path; None: every text file
    must: str  # "not-match" | "match"
    line: int | None  # of its table header in the config file


def _array_header(table: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*\[\[[ \t]*upstream[ \t]*\.[ \t]*{table}[ \t]*\]\]", re.M)


_TRANSLATE_HEADER = _array_header("translate")
_VERIFY_HEADER = _array_header("verify")
MAX_TRANSLATIONS = 64
MAX_VERIFY = 64  # [[upstream.verify]] tables, as many as translations
VERIFY_MUST = ("not-match", "match")


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


def _translations(path: Path, text: str, raw: Any) -> tuple[TranslateSpec, ...]:
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


def _verifications(path: Path, text: str, raw: Any) -> tuple[VerifySpec, ...]:
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
    # [[upstream.translate]] tables, as written (compiled and checked by vimesync.upstream.translate).
    translate: tuple[TranslateSpec, ...] = ()
    # [[upstream.verify]] tables (compiled and checked by vimesync.audit.verify).
    verify: tuple[VerifySpec, ...] = ()
    downstream_path: Path | None = None
    engine: EnginePin = field(default_factory=EnginePin)  # the first (or only) engine
    engines: tuple[EnginePin, ...] = ()  # every engine, in config order (``engine`` is the first)
    ci_repo: str | None = None  # [ci] repo: where the downstream's CI reports (owner/name)
    ci_required: tuple[str, ...] = ()  # [ci] required: contexts that must be green at the head
    ci_buildkite: str | None = None  # [ci] buildkite: org/pipeline, where `sop record ci` reads jobs
    # Which file and key named each repository path above ("upstream_path", "downstream_path",
    # "engine_source"): those are repository content; vimesync.repopaths decides whether to trust them.
    path_origins: tuple[tuple[str, Path, str], ...] = ()
    # When no config file was found: the folders discovery looked in (for error messages).
    searched: tuple[Path, ...] = ()

    def provenance(self) -> str:
        """Which config was read, or that none was found and where discovery looked."""
        if self.file is not None:
            return f"config {self.file}"
        if not self.searched:
            return f"no {CONFIG_NAME} read"
        if len(self.searched) == 1:
            return f"no {CONFIG_NAME} found in {self.searched[0]}"
        return f"no {CONFIG_NAME} found in {self.searched[0]} or any folder up to {self.searched[-1]}"


def missing_input(config: Config, what: str, *, flag: str, key: str, file: Path | None = None) -> BadInput:
    """The error for an input given neither by a flag nor by a file: it names the config read (or
    where none was found) and the flag or key that supplies it. ``file`` is the file that would hold
    ``key`` (a pin) when it is not the config itself."""
    if config.file is None:
        return BadInput(
            f"{what}: pass {flag} ({config.provenance()})",
            hint=f"or set {key} in a {CONFIG_NAME} (`vimesync init` writes one; see docs/config.md)",
        )
    holder = file or config.file
    return BadInput(
        f"{what}: neither {flag} nor {key} in {holder} ({config.provenance()})",
        hint=f"pass {flag}, or set {key} in {holder} (see docs/config.md)",
    )


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


PYPI_PREFIX = "pypi:"
# A requirement a pypi: source may name: a project name, "==" and an exact version, nothing else
# (no URL, no option, no marker, no wildcard: pip sees exactly one pinned distribution).
_REQUIREMENT = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?)==(?P<version>[0-9][A-Za-z0-9.+!_]{0,62})"
)
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
# Every key each file accepts, by table: the loaders check against these, and the docs test
# (tests/test_docs_config.py) that docs/config.md documents each one.
KNOWN_KEYS: dict[str, frozenset[str]] = {
    "vimesync.toml": frozenset({"upstream", "downstream", "engine", "ci"}),
    "vimesync.toml [upstream]": frozenset(
        {"name", "repo", "path", "branch", "pin", "policy", "map", "translate", "verify"}
    ),
    "vimesync.toml [[upstream.translate]]": frozenset({"pattern", "replace", "paths"}),
    "vimesync.toml [[upstream.verify]]": frozenset({"pattern", "paths", "must"}),
    "vimesync.toml [downstream]": frozenset({"path"}),
    "vimesync.toml [ci]": frozenset({"repo", "required", "buildkite"}),
    "vimesync.toml [engine]": frozenset({"pin", "source"}),
    "vimesync.toml [[engine]]": frozenset({"name", "pin", "source"}),
    "engine pin [engine]": frozenset(
        {"name", "repo", "rev", "series", "strip", "source", "python", "sha256", "applier", "fuzz", "forward"}
    ),
    "upstream pin [upstream]": frozenset({"repo", "synced"}),
}
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


def _source_or_package(path: Path, table: str, data: dict[str, Any]) -> tuple[Path | None, str | None]:
    """A ``source`` value: a location (made absolute lexically) or a ``pypi:`` package."""
    value = _str_or_none(path, table, data, "source")
    if value is not None and value.startswith(PYPI_PREFIX):
        return None, pypi_requirement(value, where=str(path), key=f"[{table}] source")
    return _path_or_none(path, table, data, "source"), None


def load_engine_pin(path: Path) -> EnginePin:
    data = read_toml(path)
    _check_keys(path, "<top>", data, {"engine"})
    eng = data.get("engine", {})
    if not isinstance(eng, dict):
        raise ConfigError(str(path), "[engine] must be a table")
    _check_keys(path, "engine", eng, _PIN_KEYS)
    strip = _typed(path, "engine", "strip", eng.get("strip", 1), int)
    if strip < 0:
        raise ConfigError(str(path), "[engine] strip must be >= 0")
    sha256 = _str_or_none(path, "engine", eng, "sha256")
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise ConfigError(str(path), "[engine] sha256 must be 64 hexadecimal digits")
    source, package = _source_or_package(path, "engine", eng)
    applier = _typed(path, "engine", "applier", eng.get("applier", "git"), str)
    if applier not in APPLIERS:
        raise ConfigError(str(path), f'[engine] applier must be "git" or "gnu-patch", not {excerpt(applier)}')
    fuzz = _typed(path, "engine", "fuzz", eng.get("fuzz", DEFAULT_FUZZ), int)
    if fuzz < 0 or isinstance(fuzz, bool):
        raise ConfigError(str(path), "[engine] fuzz must be an integer >= 0")
    forward = _typed(path, "engine", "forward", eng.get("forward", False), bool)
    if applier == "git" and ("fuzz" in eng or "forward" in eng):
        raise ConfigError(str(path), '[engine] fuzz and forward are GNU patch\'s: set applier = "gnu-patch"')
    return EnginePin(
        file=path,
        # Unnamed, the pin's file names it (pins/sglang.toml: "sglang"), never the word "engine".
        name=_str_or_none(path, "engine", eng, "name") or path.stem,
        repo=_str_or_none(path, "engine", eng, "repo"),
        rev=_str_or_none(path, "engine", eng, "rev"),
        series=_file_or_none(path, "engine", eng, "series"),
        strip=strip,
        source=source,
        python=_str_or_none(path, "engine", eng, "python"),
        sha256=sha256.lower() if sha256 else None,
        package=package,
        source_origin=(path, "[engine] source") if source is not None else None,
        applier=applier,
        fuzz=fuzz,
        forward=forward,
    )


def load_upstream_pin(path: Path) -> UpstreamPin:
    data = read_toml(path)
    _check_keys(path, "<top>", data, {"upstream"})
    up = data.get("upstream", {})
    _check_keys(path, "upstream", up, set(KNOWN_KEYS["upstream pin [upstream]"]))
    return UpstreamPin(
        file=path,
        repo=_str_or_none(path, "upstream", up, "repo"),
        synced=_str_or_none(path, "upstream", up, "synced"),
    )


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


def discover_config(cwd: Path) -> tuple[Path | None, tuple[Path, ...]]:
    """The first ``vimesync.toml`` from ``cwd`` upward to the repository root (the innermost folder
    holding ``.git``), and the folders looked in. Outside a repository only ``cwd`` is looked in: a
    stray ``/tmp/vimesync.toml`` must not configure every folder below it."""
    start = lexical(cwd)
    chain = (start, *start.parents)
    top = next((i for i, folder in enumerate(chain) if os.path.lexists(folder / ".git")), 0)
    looked: list[Path] = []
    for folder in chain[: top + 1]:
        looked.append(folder)
        if os.path.lexists(folder / CONFIG_NAME):
            return folder / CONFIG_NAME, tuple(looked)
    return None, tuple(looked)


def load_config(path: Path | None = None, *, cwd: Path | None = None, engines: bool = True) -> Config:
    """Load ``path`` (``--config``), else ``$VIMESYNC_CONFIG``, else the discovered
    ``vimesync.toml`` (see :func:`discover_config`), else an empty Config that says where it looked.

    ``engines=False``: the engine pins are not read (a command that never uses the engine, such
    as ``walk``, runs whatever state they are in); the config has no engine then."""
    if path is None and os.environ.get(CONFIG_ENV):
        path = Path(os.environ[CONFIG_ENV])
        if not os.path.lexists(path):
            raise ConfigError(str(path), f"no such file (named by ${CONFIG_ENV})")
    if path is None:
        found, looked = discover_config(cwd or Path.cwd())
        if found is None:
            return Config(searched=looked)
        path = found
    path = lexical(path)
    text = read_text(path)
    data = loads_toml(text, where=str(path))
    _check_keys(path, "<top>", data, set(KNOWN_KEYS["vimesync.toml"]))
    up = data.get("upstream", {})
    _check_keys(path, "upstream", up, set(KNOWN_KEYS["vimesync.toml [upstream]"]))
    down = data.get("downstream", {})
    _check_keys(path, "downstream", down, set(KNOWN_KEYS["vimesync.toml [downstream]"]))
    ci = data.get("ci", {})
    if not isinstance(ci, dict):
        raise ConfigError(str(path), "[ci] must be a table")
    _check_keys(path, "ci", ci, set(KNOWN_KEYS["vimesync.toml [ci]"]))
    required = ci.get("required", [])
    if (
        not isinstance(required, list)
        or len(required) > 100
        or not all(isinstance(c, str) and 0 < len(c) <= 255 for c in required)
    ):
        raise ConfigError(str(path), "[ci] required must be a list of at most 100 CI context names")
    if any(_CONTROL.search(c) for c in required):
        raise ConfigError(str(path), "[ci] required: a context name holds a control character")
    buildkite = _str_or_none(path, "ci", ci, "buildkite")
    slug = r"[a-z0-9][a-z0-9-]{0,99}"
    if buildkite is not None and not re.fullmatch(f"{slug}/{slug}", buildkite):
        raise ConfigError(str(path), "[ci] buildkite must be org/pipeline (Buildkite slugs)")
    # Files the config names may lie anywhere inside its repository (a config kept in ci/ may
    # name pins/ at the root), never outside it.
    root = find_root(path)
    up_pin_file = confined(root, _file_or_none(path, "upstream", up, "pin"), file=path, key="[upstream] pin")
    raw_map = up.get("map", [])
    if not isinstance(raw_map, list) or not all(isinstance(m, str) for m in raw_map):
        raise ConfigError(str(path), "[upstream] map must be a list of 'SRC=DST' strings")
    upstream_path = _path_or_none(path, "upstream", up, "path")
    downstream_path = _path_or_none(path, "downstream", down, "path")
    pins = _engines(path, data.get("engine", {}), root) if engines else ()
    engine = pins[0] if pins else EnginePin()
    origins = [("upstream_path", path, "[upstream] path")] if upstream_path else []
    origins += [("downstream_path", path, "[downstream] path")] if downstream_path else []
    if engine.source_origin is not None:
        origins.append(("engine_source", *engine.source_origin))
    return Config(
        file=path,
        upstream_name=_str_or_none(path, "upstream", up, "name") or "upstream",
        upstream_repo=_str_or_none(path, "upstream", up, "repo"),
        upstream_path=upstream_path,
        upstream_branch=_str_or_none(path, "upstream", up, "branch"),
        upstream_pin=load_upstream_pin(up_pin_file) if up_pin_file else UpstreamPin(),
        policy=confined(
            root, _file_or_none(path, "upstream", up, "policy"), file=path, key="[upstream] policy"
        ),
        path_map=parse_map(raw_map, where=str(path)),
        translate=_translations(path, text, up.get("translate")),
        verify=_verifications(path, text, up.get("verify")),
        downstream_path=downstream_path,
        engine=engine,
        engines=pins,
        path_origins=tuple(origins),
        ci_repo=_str_or_none(path, "ci", ci, "repo"),
        ci_required=tuple(required),
        ci_buildkite=buildkite,
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
            f"{key} must be inside the repository {root}",
            hint="pins, policies and series files are repository content: keep them anywhere inside "
            "the repository that holds the config",
        )
    return real


MAX_ENGINES = 32
MAX_TRANSLATE_GLOBS = 64  # globs per [[upstream.translate]] table (a policy rule's cap)


def _engines(path: Path, value: Any, root: Path) -> tuple[EnginePin, ...]:
    """``[engine]`` (one engine) or ``[[engine]]`` (several, each with a unique ``name``)."""
    if isinstance(value, dict):
        _check_keys(path, "engine", value, set(KNOWN_KEYS["vimesync.toml [engine]"]))
        pin = _engine(path, "engine", value, root)
        return (pin,) if pin.configured else ()
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ConfigError(str(path), "engine must be one [engine] table or [[engine]] tables")
    if len(value) > MAX_ENGINES:
        raise ConfigError(str(path), f"more than {MAX_ENGINES} [[engine]] tables")
    engines: list[EnginePin] = []
    seen: set[str] = set()
    for i, table in enumerate(value, 1):
        where = f"engine {i}"
        _check_keys(path, where, table, set(KNOWN_KEYS["vimesync.toml [[engine]]"]))
        key = _str_or_none(path, where, table, "name")
        if not key or not key.strip():
            raise ConfigError(str(path), f"[[engine]] number {i} needs a name (used by --engine)")
        if _CONTROL.search(key):
            raise ConfigError(str(path), f"[[engine]] number {i}: name must not contain control characters")
        if key.casefold() in seen:
            raise ConfigError(str(path), f"two [[engine]] tables are named {excerpt(key)}")
        seen.add(key.casefold())
        pin = _engine(path, f"engine {excerpt(key)}", table, root)
        name = pin.name if pin.file is not None and pin.name != "engine" else key
        engines.append(replace(pin, key=key, name=name))
    return tuple(engines)


def _engine(path: Path, table: str, eng: dict[str, Any], root: Path) -> EnginePin:
    """One engine: its pin, with the config's machine-local ``source`` filling a pin that has none.
    Files it names may lie anywhere inside the repository ``root``."""
    pin_file = confined(root, _file_or_none(path, table, eng, "pin"), file=path, key=f"[{table}] pin")
    pin = load_engine_pin(pin_file) if pin_file else EnginePin()
    if pin.file is not None and pin.series is not None:
        confined(root, pin.series, file=pin.file, key="[engine] series")
        input_kind(pin.series, root=root)  # a symlink there (or on the way) is refused now
    source, package = _source_or_package(path, table, eng)
    if pin.source is not None or pin.package is not None:
        return pin
    if source is not None:
        return replace(pin, source=source, source_origin=(path, f"[{table}] source"))
    if package is not None:
        return replace(pin, package=package)
    return pin


def select_engine(config: Config, name: str) -> EnginePin:
    """The engine ``--engine NAME`` names (its config name or its pin's display name, any case)."""
    engines = config.engines or ((config.engine,) if config.engine.configured else ())
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
