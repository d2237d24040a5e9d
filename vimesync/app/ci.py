"""``ci``: the exact-head CI verdict of one commit (or a pull request's head)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vimesync.app.flags import CiFlags
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.ci.verdict import CiEvidence
from vimesync.errors import BadInput
from vimesync.outputs.model import Findings


@dataclass(frozen=True)
class CiOutcome:
    evidence: CiEvidence
    kind: Kind = Kind.CI

    @property
    def ok(self) -> bool:
        return self.evidence.green

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.ci.verdict import evidence_to_dict

        return document(self.kind, self.exit_code, evidence_to_dict(self.evidence))

    def findings(self) -> Findings:
        from vimesync.outputs.findings import ci_findings

        return ci_findings(self.evidence)


def ci(ws: Workspace, r: CiFlags) -> CiOutcome:
    """Read the statuses and check runs of exactly one commit (``--sha``, or the head of ``--pr``;
    through github/) and judge them."""
    from vimesync.ci.evidence import check_sha, choose_repo, read_evidence
    from vimesync.github import GitHubClient

    if r.pr is None and r.sha is None:
        raise BadInput("pass --pr N or --sha SHA: CI evidence is for one exact commit")
    cfg = ws.config
    repo = choose_repo(r.repo, cfg.ci_repo, untrusted=ws.untrusted, job=ws.settings.job_repository)
    if repo is None:
        raise BadInput("no repository: pass --repo owner/name (or set [ci] repo in vimesync.toml)")
    if r.sha is not None:
        check_sha(r.sha)
    required = ws.required_ci(r.require)
    client = GitHubClient(repo, ws.settings.github)
    try:
        evidence = read_evidence(client, sha=r.sha, pr=r.pr, required=required)
    finally:
        client.close()
    return CiOutcome(evidence)
