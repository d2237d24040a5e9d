"""The config's data model: Config (``vimesync.toml``), EnginePin and UpstreamPin (``pins/*.toml``),
TranslateSpec and VerifySpec (its ``[[upstream.translate]]`` and ``[[upstream.verify]]`` tables),
and the error for an input neither a flag nor a file gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vimesync.config.cigroups import GroupRule
from vimesync.config.discovery import CONFIG_NAME
from vimesync.errors import BadInput

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
    downstream_name: str = ""  # [downstream] name: the fork's display name ("Vime"); "" when unset
    engines: tuple[EnginePin, ...] = ()  # every engine configured, in config order
    ci_repo: str | None = None  # [ci] repo: where the downstream's CI reports (owner/name)
    ci_required: tuple[str, ...] = ()  # [ci] required: contexts that must be green at the head
    ci_buildkite: str | None = None  # [ci] buildkite: org/pipeline, where `sop record ci` reads jobs
    ci_groups: tuple[GroupRule, ...] = ()  # [[ci.groups]]: how `sop record ci` counts jobs by step
    # Which file and key named each repository path above ("upstream_path", "downstream_path",
    # "engine_source"): those are repository content; vimesync.repopaths decides whether to trust them.
    path_origins: tuple[tuple[str, Path, str], ...] = ()
    # When no config file was found: the folders discovery looked in (for error messages).
    searched: tuple[Path, ...] = ()

    @property
    def engine(self) -> EnginePin:
        """The first (or only) engine; an empty pin when none is configured."""
        return self.engines[0] if self.engines else EnginePin()

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
