"""Read the CI results of one commit (or a pull request's head) through ``vimesync.github``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vimesync.ci.verdict import CiEvidence, judge
from vimesync.errors import BadInput
from vimesync.github import GitHubClient, is_repo_name

MAX_EARLIER = 10  # earlier commits of a PR whose results are listed as not evidence
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def check_repo(repo: str, *, what: str = "--repo") -> str:
    """``repo`` when it is an owner/name GitHub could hold (the one rule, ``github.is_repo_name``)."""
    if not is_repo_name(repo) or repo.split("/")[1] in (".", ".."):
        raise BadInput(f"{what} {repo[:100]!r}: expected owner/name, e.g. vime-org/vime")
    return repo


def choose_repo(
    flag: str | None, configured: str | None, *, job: str | None, untrusted: bool, what: str = "--repo"
) -> str | None:
    """Which repository's CI is evidence: the flag, else (in an untrusted checkout) the job's own
    (``job``: ``GITHUB_REPOSITORY``), else ``[ci] repo``.

    In an untrusted checkout ``[ci] repo`` is a pull request's to edit: pointed at a repository
    holding the same commit with green statuses, it would forge the evidence. There it is used
    only when it names the job's own repository."""
    if flag is not None:
        return check_repo(flag, what=what)
    if untrusted:
        if configured is not None and configured != job:
            raise BadInput(
                f"[ci] repo {configured[:100]!r} is repository content and not this job's repository"
                f" ({job or 'GITHUB_REPOSITORY is not set'}): in an untrusted checkout CI evidence"
                " is read from the job's repository only",
                hint=f"pass {what} owner/name on the command line",
            )
        return check_repo(job, what="GITHUB_REPOSITORY") if job else None
    if configured is not None:
        return check_repo(configured, what="[ci] repo")
    return None


def check_sha(sha: str) -> str:
    if not _SHA.fullmatch(sha):
        raise BadInput(
            f"--sha {sha[:80]!r}: expected a full commit sha (40 hex digits): "
            "CI evidence is for one exact commit"
        )
    return sha


def read_evidence(
    client: GitHubClient,
    *,
    sha: str | None = None,
    pr: int | None = None,
    required: Sequence[str] = (),
    max_earlier: int = MAX_EARLIER,
) -> CiEvidence:
    """The verdict on ``sha``, or on PR ``pr``'s current head with its earlier commits' results
    listed as not evidence (the ``max_earlier`` most recent; the rest counted, not read)."""
    earlier_shas: list[str] = []
    if pr is not None:
        head = client.pull_head(pr)
        if sha is not None and sha != head:
            raise BadInput(
                f"commit {sha[:12]} is not the current head of PR #{pr} ({head[:12]}): "
                "CI evidence is for the head only"
            )
        sha = head
        earlier_shas = [s for s in client.pull_commits(pr) if s != head]
    if sha is None:
        raise BadInput("no commit: pass --pr N or --sha SHA")
    recent = list(reversed(earlier_shas))[:max_earlier]
    return judge(
        client.repo,
        client.commit_checks(sha),
        required=required,
        pr=pr,
        earlier=[client.commit_checks(s) for s in recent],
        earlier_cut=len(earlier_shas) - len(recent),
    )
