"""``walk``: classify the upstream PRs of a range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.errors import EXIT_OK
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED, Decision, PullRequest, WalkResult

if TYPE_CHECKING:
    from vimesync.outputs.model import Findings


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


def walk(ws: Workspace, *, progress: Progress = no_progress) -> WalkOutcome:
    """Walk the range into merged PRs and classify them (applicable/excluded/mirrored), mirrored
    where the downstream (when one is given) carries them at --downstream-rev, else its HEAD.
    ``progress``: told each part of the walk."""
    from vimesync.app import upstreamsteps

    return WalkOutcome(upstreamsteps.walk(ws, at=ws.flags.downstream_rev, progress=progress))


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
