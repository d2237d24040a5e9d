"""``walk``: classify the upstream PRs of a range."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document
from vimesync.errors import EXIT_OK
from vimesync.outputs.model import Findings
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED, Decision, PullRequest, WalkResult


@dataclass(frozen=True)
class WalkRequest:
    """What the flags say (None: not given)."""

    upstream: Path | None = None
    range_: str | None = None
    policy: Path | None = None
    downstream: Path | None = None
    downstream_rev: str | None = None
    pr_metadata: Path | None = None
    github: bool = False
    config: Path | None = None
    accept_similar: bool = False  # similar content counts as mirrored (else it only suggests)


@dataclass(frozen=True)
class WalkOutcome:
    """The walk, classified. Nothing in a walk fails: exit 0 unless the input was bad (raised)."""

    walk: WalkResult
    kind: Kind = Kind.WALK
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def empty(self) -> bool:
        return not self.walk.prs and not self.walk.direct_commits

    @property
    def notes(self) -> tuple[str, ...]:
        return self.walk.notes

    def findings(self) -> Findings:
        from vimesync.outputs.findings import walk_findings

        return walk_findings(self.walk)

    def to_json(self) -> dict[str, Any]:
        body = walk_body(self.walk)
        if self.empty:
            body["message"] = "nothing to sync"
        return document(self.kind, self.exit_code, body)


def walk(request: WalkRequest) -> WalkOutcome:
    """Walk the range into merged PRs and classify them (applicable/excluded/mirrored)."""
    from vimesync.config import load_config
    from vimesync.upstream.pipeline import walk_and_classify

    github = None
    if request.github:
        from vimesync.settings import Settings

        github = Settings.capture().github  # workspace: passed down once the workspace lands
    result = walk_and_classify(
        request.upstream,
        request.range_,
        policy=request.policy,
        downstream=request.downstream,
        pr_metadata=request.pr_metadata,
        github=github,
        config=load_config(request.config, engines=False),  # walk never uses the engine
        downstream_rev=request.downstream_rev,
        accept_similar=request.accept_similar,
    )
    return WalkOutcome(result)


def walk_body(result: WalkResult) -> dict[str, Any]:
    """The document's body: range, PRs in merge order (oldest first), direct commits, totals."""

    def pr_doc(pr: PullRequest) -> dict[str, Any]:
        d = pr.decision
        return {
            "number": pr.number,
            "title": pr.title,
            "kind": pr.kind.value,
            "merge_commit": pr.merge_commit,
            "commits": list(pr.commits),
            "paths": list(pr.paths),
            "labels": list(pr.labels),
            "author": pr.author,
            "reverts": pr.reverts,
            "status": status_of(pr),
            "reason": decision_reason(d),
            "rule": d.rule if d else None,
            "partial_paths": list(d.partial_paths) if d else [],
            "mirrored_by": d.mirrored_by if d else None,
        }

    return {
        "upstream": result.upstream,
        "range": {"base": result.base, "tip": result.tip},
        "prs": [pr_doc(pr) for pr in result.prs],
        "direct_commits": [
            {
                "sha": c.sha,
                "title": c.title,
                "paths": list(c.paths),
                "reverts": c.reverts,
                "mirrored_by": c.mirrored_by,
            }
            for c in result.direct_commits
        ],
        "totals": totals(result),
        "notes": list(result.notes),
    }


def status_of(pr: PullRequest) -> str:
    return pr.decision.status if pr.decision else APPLICABLE


def partly_excluded(paths: tuple[str, ...], limit: int | None = None) -> str:
    shown = paths[:limit] if limit is not None else paths
    return f"partly in excluded paths: {', '.join(shown)}" + (" …" if len(shown) < len(paths) else "")


def joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def decision_reason(d: Decision | None) -> str:
    """Why a PR has its status, in words: the policy's reason, then the excluded paths it partly
    touches. The ``--json`` reason; the table says the same (with the rule, at most 3 paths)."""
    if d is None:
        return ""
    return joined(d.reason, partly_excluded(d.partial_paths) if d.partial_paths else "")


def totals(result: WalkResult) -> dict[str, int]:
    counts = {APPLICABLE: 0, EXCLUDED: 0, MIRRORED: 0}
    for pr in result.prs:
        counts[status_of(pr)] += 1
    return {"prs": len(result.prs), **counts, "direct_commits": len(result.direct_commits)}
