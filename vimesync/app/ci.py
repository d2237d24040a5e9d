"""``ci``: the exact-head CI verdict of one commit (or a pull request's head)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document, exit_code_of
from vimesync.ci.verdict import CiEvidence
from vimesync.errors import BadInput
from vimesync.outputs.model import Findings


@dataclass(frozen=True)
class CiRequest:
    """What the flags say (None: not given): one of ``pr`` and ``sha`` at least."""

    repo: str | None = None
    pr: int | None = None
    sha: str | None = None
    require: tuple[str, ...] = ()
    config: Path | None = None


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


def ci(request: CiRequest) -> CiOutcome:
    """Read the statuses and check runs of exactly one commit (through github.py) and judge them."""
    from vimesync.ci.evidence import check_sha, choose_repo, read_evidence
    from vimesync.config import load_config
    from vimesync.github import GitHubClient
    from vimesync.settings import Settings
    from vimesync.sop.gatesfile import gates_of

    settings = Settings.capture()  # workspace: passed down once the workspace lands
    r = request
    if r.pr is None and r.sha is None:
        raise BadInput("pass --pr N or --sha SHA: CI evidence is for one exact commit")
    cfg = load_config(r.config)
    repo = choose_repo(r.repo, cfg.ci_repo, job=settings.job_repository, untrusted=settings.untrusted)
    if repo is None:
        raise BadInput("no repository: pass --repo owner/name (or set [ci] repo in vimesync.toml)")
    if r.sha is not None:
        check_sha(r.sha)
    required = r.require or cfg.ci_required or gates_of(cfg).required
    client = GitHubClient(repo, settings.github)
    try:
        evidence = read_evidence(client, sha=r.sha, pr=r.pr, required=required)
    finally:
        client.close()
    return CiOutcome(evidence)
