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

The package, by concern: ``model`` (Config, EnginePin, UpstreamPin, TranslateSpec, VerifySpec),
``discovery`` (which file), ``load`` (``vimesync.toml`` read into a Config), ``values`` (the keys
each table accepts, typed values), ``arrays`` (``[[upstream.translate]]``/``[[upstream.verify]]``),
``enginetables`` (``[engine]``/``[[engine]]``, ``--engine NAME``), ``pinfiles`` (the pin files),
``files`` (reading the files a config names, kept inside the repository). Callers use this
package's names (``config.load_config``, ``config.Config``...), never a submodule's.
"""

from __future__ import annotations

from vimesync.config.arrays import MAX_TRANSLATIONS, MAX_VERIFY
from vimesync.config.discovery import CONFIG_ENV, CONFIG_NAME, discover_config
from vimesync.config.enginetables import MAX_ENGINES, select_engine
from vimesync.config.files import confined, read_text, read_toml
from vimesync.config.load import load_config, locate_config, parse_map, read_config
from vimesync.config.model import (
    APPLIERS,
    DEFAULT_FUZZ,
    Config,
    EnginePin,
    TranslateSpec,
    UpstreamPin,
    VerifySpec,
    missing_input,
)
from vimesync.config.pinfiles import PYPI_PREFIX, load_engine_pin, load_upstream_pin, pypi_requirement
from vimesync.config.values import KNOWN_KEYS

__all__ = [
    "APPLIERS",
    "CONFIG_ENV",
    "CONFIG_NAME",
    "DEFAULT_FUZZ",
    "KNOWN_KEYS",
    "MAX_ENGINES",
    "MAX_TRANSLATIONS",
    "MAX_VERIFY",
    "PYPI_PREFIX",
    "Config",
    "EnginePin",
    "TranslateSpec",
    "UpstreamPin",
    "VerifySpec",
    "confined",
    "discover_config",
    "load_config",
    "load_engine_pin",
    "load_upstream_pin",
    "locate_config",
    "missing_input",
    "parse_map",
    "pypi_requirement",
    "read_config",
    "read_text",
    "read_toml",
    "select_engine",
]
