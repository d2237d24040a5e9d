"""The data model of an upstream walk."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

APPLICABLE = "applicable"
EXCLUDED = "excluded"
MIRRORED = "mirrored"


class PrKind(str, Enum):
    """How a PR landed on the first-parent line: a merge commit, one squashed commit, or its
    commits rebased one after the other."""

    MERGE = "merge"
    SQUASH = "squash"
    REBASE = "rebase"


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str = ""
    author: str = ""
    date: str = ""  # ISO 8601 committer date


@dataclass(frozen=True)
class Decision:
    """How the policy (or the downstream) classified a PR, and why."""

    status: str  # APPLICABLE | EXCLUDED | MIRRORED
    reason: str  # "" when no rule matched and the PR is simply applicable
    rule: int | None = None  # 1-based index of the deciding [[rule]] in the policy file
    action: str | None = None  # the deciding rule's action ("include"/"exclude"), None if no rule
    partial_paths: tuple[str, ...] = ()  # paths matching an exclude paths rule when only some do
    mirrored_by: str | None = None  # "trailer Upstream-PR", "patch-id", ... when MIRRORED
    # Similar content in a downstream commit: a suggestion, never a decision (an upstream PR can
    # copy another PR's lines to make it look carried), unless --accept-similar says so.
    looks_mirrored: str | None = None


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    commits: tuple[str, ...]  # full shas, oldest first
    paths: tuple[str, ...]  # changed paths, sorted
    merge_commit: str  # the first-parent commit that landed it (the last one for rebase merges)
    kind: PrKind  # a plain "merge"/"squash"/"rebase" is taken as its PrKind
    labels: tuple[str, ...] = ()
    author: str = ""
    reverts: int | None = None  # PR number this PR reverts, when it is a revert that could be linked
    decision: Decision | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PrKind(self.kind))


@dataclass(frozen=True)
class DirectCommit:
    sha: str
    title: str
    paths: tuple[str, ...] = ()
    reverts: int | None = None
    side_commits: tuple[str, ...] = ()  # for a direct merge: the commits it brought in, oldest first
    # How the downstream carries it ("trailer Upstream-Commit in <sha>"), None when it does not:
    # a carried direct push reads as carried, as a PR does.
    mirrored_by: str | None = None


@dataclass(frozen=True)
class WalkResult:
    base: str  # full sha
    tip: str  # full sha
    prs: tuple[PullRequest, ...]  # merge order, oldest first
    direct_commits: tuple[DirectCommit, ...]
    upstream: str = ""  # display name / owner/repo of the upstream, for links
    first_parents: tuple[str, ...] = ()  # TIP's first-parent line inside the range, oldest first
    notes: tuple[str, ...] = ()  # things the user should know about this result (not errors)

    def by_status(self, status: str) -> list[PullRequest]:
        return [p for p in self.prs if p.decision is not None and p.decision.status == status]
