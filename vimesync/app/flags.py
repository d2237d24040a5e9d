"""The request vocabulary: four flag groups, each a frozen dataclass of what the flags say (None:
not given), built by keyword at the CLI boundary and passed down whole.

- :class:`SyncFlags`: which sync — config, upstream, downstream, range, baseline, head, ledger name,
  path map, policy, PR metadata; resolved once by :class:`vimesync.app.workspace.Workspace`;
- :class:`EngineFlags` (defined beside the check plan it feeds, :mod:`vimesync.check.model`): which
  engine, source, revision, series, strip, applier...;
- :class:`CiFlags`: where the head's CI is read, what must be green, which gates are off;
- :class:`OutputFlags`: the format, the files written, the CI outputs (--junit, --annotations).

A use case's request is these groups plus what only that command says (``carry --pr``, ``sop record
run --name``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vimesync.check.flags import EngineFlags

__all__ = ["CiFlags", "EngineFlags", "OutputFlags", "SyncFlags"]


@dataclass(frozen=True)
class SyncFlags:
    """The sync flag group."""

    config: Path | None = None
    upstream: Path | None = None
    upstream_repo: str | None = None  # owner/name, over [upstream] repo
    downstream: Path | None = None
    range_: str | None = None  # BASE..TIP of the upstream
    policy: Path | None = None
    path_map: tuple[str, ...] | None = None  # --map SRC=DST, over [upstream] map
    baseline: str | None = None  # the downstream commit before the sync
    head: str | None = None  # the sync's head (None: HEAD)
    sync: str | None = None  # the ledger's and records' name (None: <upstream base8>..<tip8>)
    upstream_tip: str | None = None
    upstream_base: str | None = None
    downstream_rev: str | None = None  # walk: where the downstream is looked at for mirrored PRs
    pr_metadata: Path | None = None
    github: bool = False
    accept_similar: bool = False  # similar content counts as mirrored (else it only suggests)


@dataclass(frozen=True)
class CiFlags:
    """The CI flag group: where the head's CI is read and what it must show."""

    repo: str | None = None  # --ci-repo (``ci --repo``): owner/name on GitHub
    pr: int | None = None  # --ci-pr: the PR whose head it must be
    sha: str | None = None  # ``ci --sha``: a commit instead of the head
    require: tuple[str, ...] = ()  # contexts that must be green
    skip_gate: tuple[str, ...] = ()  # gates switched off for this run
    pipeline: str | None = None  # --pipeline org/slug (Buildkite)
    build: int | None = None  # --build N (Buildkite)


Format = Literal["text", "json", "markdown"]


@dataclass(frozen=True)
class OutputFlags:
    """The output flag group: the format and the files a command writes."""

    format: Format = "text"
    output: Path | None = None  # --output FILE
    junit: Path | None = None  # --junit FILE
    annotations: Literal["auto", "github", "none"] = "auto"
    publish: str | None = None  # --publish owner/repo#N

    @property
    def as_json(self) -> bool:
        return self.format == "json"
