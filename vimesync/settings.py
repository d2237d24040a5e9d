"""The job's environment, read once: every variable vimesync heeds, named and typed here.

Only flags and the environment come from the job (a checkout is a stranger's), so what the
environment may change is listed in one place: tokens, API roots, deadlines, the trust mode, the
cache folder, the committer of the commits we make, the CI runner's outputs, and the base
environment handed to child processes. The CLI boundary takes one snapshot
(:meth:`Settings.capture`) and passes it down, through the workspace, to what needs a value; no
other module reads ``os.environ`` (``tests/test_layers.py`` enforces it).

Child processes (git, pip, parse workers, pre-commit) are started by the process choke points
(:mod:`vimesync.git`, :mod:`vimesync.procrun`) for every caller, so they take their base
environment from the snapshot the boundary installed (:func:`installed`), not through every
call: that and nothing else is what :func:`installed` is for.

A value is parsed when first asked for, so a malformed variable fails only the command that reads
it (``VIMESYNC_PIP_TIMEOUT=soon`` does not stop a ``walk``), with an error naming the variable,
never its value (it may be a secret).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from vimesync.errors import BadInput

# --- the variables, by what they set -----------------------------------------------------------
CONFIG_ENV = "VIMESYNC_CONFIG"  # the config file (trusted, like --config)
CACHE_ENV = "VIMESYNC_CACHE_DIR"
UNTRUSTED_ENV = "VIMESYNC_UNTRUSTED"
GITHUB_TOKEN_ENVS = ("GITHUB_TOKEN", "GH_TOKEN")  # GH_TOKEN: the gh CLI's
GITHUB_API_ENVS = ("VIMESYNC_GITHUB_API", "GITHUB_API_URL")  # GITHUB_API_URL: set on every Actions runner
GITHUB_DEADLINE_ENV = "VIMESYNC_GITHUB_DEADLINE"
GITHUB_WAIT_ENV = "VIMESYNC_GITHUB_WAIT_BUDGET"
BUILDKITE_TOKEN_ENV = "BUILDKITE_API_TOKEN"
BUILDKITE_API_ENV = "VIMESYNC_BUILDKITE_API"
REGISTRY_TOKEN_ENV = "VIMESYNC_REGISTRY_TOKEN"
REGISTRY_INSECURE_ENV = "VIMESYNC_REGISTRY_INSECURE"
REGISTRY_DEADLINE_ENV = "VIMESYNC_REGISTRY_DEADLINE"
PIP_TIMEOUT_ENV = "VIMESYNC_PIP_TIMEOUT"
CARRY_BYTES_ENV = "VIMESYNC_CARRY_TRANSLATE_BYTES"
CARRY_MATCHES_ENV = "VIMESYNC_CARRY_TRANSLATE_MATCHES"
CARRY_SECONDS_ENV = "VIMESYNC_CARRY_SECONDS"
COMMITTER_ENVS = ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")
COMPLETION_ENV = "_VIMESYNC_COMPLETE"  # set by the shell's completion script

GITHUB_API = "https://api.github.com"
GITHUB_DEADLINE = 60.0  # seconds for one call, whatever the server does
GITHUB_WAIT_BUDGET = 60.0  # seconds of rate-limit waits in one process
BUILDKITE_API = "https://api.buildkite.com"  # the client's paths start with /v2/
BUILDKITE_DEADLINE = 60.0  # seconds for one listing, every page
REGISTRY_DEADLINE = 60.0
REGISTRY_MAX_DEADLINE = 3600.0
PIP_TIMEOUT = 900.0

# Set by the CI systems we know: GitHub Actions, GitLab, Buildkite, CircleCI, Travis, Drone,
# Woodpecker, Semaphore, Bitbucket, Codefresh and others set CI; those below each have their own
# marker (some set CI too, some never: AWS CodeBuild, Google Cloud Build, TeamCity, Jenkins,
# Azure Pipelines). docs/SECURITY.md lists them.
CI_MARKERS = (
    "CI",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "HUDSON_URL",
    "TF_BUILD",  # Azure Pipelines
    "CODEBUILD_BUILD_ID",  # AWS CodeBuild
    "BUILDER_OUTPUT",  # Google Cloud Build
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "DRONE",
    "CI_NAME",  # Codeship
    "APPVEYOR",
    "BITRISE_IO",
    "GO_PIPELINE_NAME",  # GoCD
    "HARNESS_BUILD_ID",
    "CF_BUILD_ID",  # Codefresh
)

# A variable whose name holds one of these never reaches a tool that runs repository code.
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


@dataclass(frozen=True, kw_only=True)
class GitHubSettings:
    cache: Path  # where GitHub's answers are kept with their ETags: github/ in the cache folder
    token: str | None = None
    api: str = GITHUB_API  # no trailing slash
    deadline: float = GITHUB_DEADLINE  # seconds for one call (redirects, 202s, retries included)
    wait_budget: float = GITHUB_WAIT_BUDGET  # seconds of rate-limit waits in one process


@dataclass(frozen=True)
class BuildkiteSettings:
    token: str | None = None
    api: str = BUILDKITE_API  # no trailing slash
    deadline: float = BUILDKITE_DEADLINE


@dataclass(frozen=True)
class RegistrySettings:
    token: str | None = None
    insecure: bool = False  # VIMESYNC_REGISTRY_INSECURE: plain http (to loopback only)
    deadline: float = REGISTRY_DEADLINE


@dataclass(frozen=True)
class CarryBudget:
    """What one carry run may spend (vimesync.carry.budget says why each bound is there)."""

    max_bytes: int
    max_matches: int
    max_seconds: float


@dataclass(frozen=True, eq=False)
class Settings:
    """A snapshot of the job's environment and what vimesync reads from it."""

    environ: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def capture(cls) -> Settings:
        """The snapshot of this process's environment (the CLI boundary's; tests build their own
        with :meth:`of`)."""
        return cls(MappingProxyType(dict(os.environ)))

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Settings:
        return cls(MappingProxyType(dict(environ)))

    def get(self, name: str) -> str | None:
        """A variable's value, None when unset or empty."""
        return self.environ.get(name) or None

    # --- trust -----------------------------------------------------------------------------
    @cached_property
    def untrusted(self) -> bool:
        """The checkout is a stranger's: ``VIMESYNC_UNTRUSTED=1``, or any CI marker unless
        ``VIMESYNC_UNTRUSTED=0`` (a job on trusted refs only)."""
        explicit = (self.get(UNTRUSTED_ENV) or "").strip().lower()
        if explicit in ("1", "true", "yes"):
            return True
        if explicit in ("0", "false", "no"):
            return False
        return self.on_ci

    @cached_property
    def on_ci(self) -> bool:
        """A CI system's marker is set (``CI=true``, ``GITHUB_ACTIONS``, ...): a job's log."""
        return any((self.get(m) or "").strip().lower() not in ("", "0", "false") for m in CI_MARKERS)

    # --- where things are ------------------------------------------------------------------
    @cached_property
    def config_file(self) -> Path | None:
        value = self.get(CONFIG_ENV)
        return Path(value) if value else None

    @cached_property
    def home(self) -> Path | None:
        value = self.get("HOME")
        return Path(value) if value else None

    @cached_property
    def cache_dir(self) -> Path:
        """vimesync's cache folder: ``$VIMESYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vimesync``,
        else ``~/.cache/vimesync``."""
        if value := self.get(CACHE_ENV):
            return Path(value)
        if value := self.get("XDG_CACHE_HOME"):
            return Path(value) / "vimesync"
        return (self.home or Path.home()) / ".cache" / "vimesync"

    # --- services --------------------------------------------------------------------------
    @cached_property
    def github(self) -> GitHubSettings:
        token = next((v for n in GITHUB_TOKEN_ENVS if (v := self.get(n))), None)
        api = next((v for n in GITHUB_API_ENVS if (v := self.get(n))), GITHUB_API)
        return GitHubSettings(
            cache=self.cache_dir / "github",
            token=token,
            api=api.rstrip("/"),
            deadline=self.seconds(GITHUB_DEADLINE_ENV, GITHUB_DEADLINE),
            wait_budget=self.seconds(GITHUB_WAIT_ENV, GITHUB_WAIT_BUDGET),
        )

    @cached_property
    def buildkite(self) -> BuildkiteSettings:
        api = self.get(BUILDKITE_API_ENV) or BUILDKITE_API
        return BuildkiteSettings(token=self.get(BUILDKITE_TOKEN_ENV), api=api.rstrip("/"))

    @cached_property
    def registry(self) -> RegistrySettings:
        insecure = (self.get(REGISTRY_INSECURE_ENV) or "").strip().lower() in ("1", "true", "yes")
        deadline = self.seconds(REGISTRY_DEADLINE_ENV, REGISTRY_DEADLINE)
        if deadline > REGISTRY_MAX_DEADLINE:
            raise BadInput(f"{REGISTRY_DEADLINE_ENV}: expected seconds from 1 to {REGISTRY_MAX_DEADLINE:.0f}")
        return RegistrySettings(token=self.get(REGISTRY_TOKEN_ENV), insecure=insecure, deadline=deadline)

    @cached_property
    def pip_timeout(self) -> float:
        return self.seconds(PIP_TIMEOUT_ENV, PIP_TIMEOUT)

    def carry_budget(self, *, max_bytes: int, max_matches: int, max_seconds: float) -> CarryBudget:
        """The carry's bounds, each raised or lowered by its variable (the defaults are carry's)."""
        return CarryBudget(
            max_bytes=int(self.number(CARRY_BYTES_ENV, max_bytes)),
            max_matches=int(self.number(CARRY_MATCHES_ENV, max_matches)),
            max_seconds=self.number(CARRY_SECONDS_ENV, max_seconds),
        )

    # --- the job -----------------------------------------------------------------------------
    @cached_property
    def committer(self) -> Mapping[str, str]:
        """``GIT_COMMITTER_*`` as the job sets them (not yet checked: see app.carry.committer)."""
        return MappingProxyType({n: v for n in COMMITTER_ENVS if (v := self.get(n))})

    @cached_property
    def on_github_actions(self) -> bool:
        return self.get("GITHUB_ACTIONS") == "true"

    @cached_property
    def step_summary(self) -> Path | None:
        value = self.get("GITHUB_STEP_SUMMARY")
        return Path(value) if value else None

    @cached_property
    def job_repository(self) -> str | None:
        """``GITHUB_REPOSITORY``: the repository the job runs for (owner/name, unchecked)."""
        return self.get("GITHUB_REPOSITORY")

    @cached_property
    def columns(self) -> str | None:
        return self.get("COLUMNS")

    @cached_property
    def completing(self) -> bool:
        """A shell asks for completions (typer reads the words from the environment)."""
        return COMPLETION_ENV in self.environ

    # --- child processes -----------------------------------------------------------------------
    def child_env(
        self,
        *,
        allow: Collection[str] | None = None,
        prefixes: tuple[str, ...] = (),
        secrets: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """The base environment of a child process: the variables in ``allow`` and those starting
        with one of ``prefixes`` (every variable when ``allow`` is None), without the ones named
        like secrets unless ``secrets``; then ``extra``."""
        env = {
            k: v
            for k, v in self.environ.items()
            if (allow is None or k in allow or k.startswith(prefixes))
            and (secrets or not any(w in k.upper() for w in SECRET_WORDS))
        }
        env.update(extra or {})
        return env

    # --- parsing ---------------------------------------------------------------------------
    def number(self, name: str, default: float) -> float:
        """A positive number from ``name``, else ``default``."""
        raw = self.get(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise BadInput(f"{name} must be a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise BadInput(f"{name} must be a positive number")
        return value

    def seconds(self, name: str, default: float) -> float:
        """A positive number of seconds from ``name``, else ``default``."""
        try:
            return self.number(name, default)
        except BadInput:
            raise BadInput(f"{name} must be a positive number of seconds") from None


_INSTALLED: list[Settings] = []


@contextmanager
def install(settings: Settings) -> Iterator[Settings]:
    """Make ``settings`` the snapshot child processes start from, for one command (the CLI
    boundary's; nested installs stack)."""
    _INSTALLED.append(settings)
    try:
        yield settings
    finally:
        _INSTALLED.pop()


def installed() -> Settings:
    """The snapshot the boundary installed, else this process's environment now (a library
    caller, a test). For the process choke points only (see the module docstring)."""
    return _INSTALLED[-1] if _INSTALLED else Settings.capture()
