"""What ``vimesync init`` found out about the upstream and the engine, from its flags and the
repositories: the values ``plan`` works out and ``templates`` writes into the files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpstreamFacts:
    name: str
    repo: str | None
    path: str | None  # relative to the downstream, as written
    url: str | None
    branch: str | None
    synced: str | None


@dataclass(frozen=True)
class EngineFacts:
    name: str | None
    repo: str | None
    rev: str | None
    source: str | None  # relative to the downstream, as written
    sha256: str | None = None  # an archive source's digest: the pin it makes is exact
