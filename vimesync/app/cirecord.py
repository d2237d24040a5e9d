"""``vimesync sop record ci`` as a use case: a snapshot of the CI jobs behind the evidence head,
recorded in ``sop/records/<sync>.toml`` (:mod:`vimesync.sop.cirecords`).

From Buildkite when a pipeline is named (``--pipeline``, else ``[ci] buildkite``) and
``BUILDKITE_API_TOKEN`` is set: the newest build of exactly that commit (or ``--build N``), its
jobs counted by their last attempt, an agent lost (exit -1) told apart from a failed test. Else
from the commit's GitHub check runs (``--ci-repo``, else ``[ci] repo``; ``GITHUB_TOKEN``)."""

from __future__ import annotations

from vimesync.app.evidence import RecordResult, evidence_heads
from vimesync.app.flags import CiFlags
from vimesync.app.result import Kind
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput
from vimesync.sop.results import now


def record_ci_jobs(ws: Workspace, request: CiFlags) -> RecordResult:
    """Read the evidence head's CI jobs and record their counts for it: ``request.pipeline``
    (default: [ci] buildkite) and ``request.build`` (default: the newest of the commit) on
    Buildkite, else the GitHub check runs of ``request.repo`` (default: [ci] repo)."""
    from vimesync import buildkite
    from vimesync.sop.cirecords import ci_values, summarise_buildkite, summarise_checks
    from vimesync.sop.results import write_table

    if request.build is not None and not 0 <= request.build < 10**9:
        raise BadInput(f"--build {request.build}: expected a Buildkite build number")
    checkout = ws.checkout
    name = ws.sync_name
    head, bound = evidence_heads(ws)
    if not bound:
        raise BadInput("no head to record CI for (run inside the downstream, or pass --head)")
    pipeline = request.pipeline
    if pipeline is None and checkout.ci_buildkite is not None:
        if ws.untrusted:
            # A pull request could name another pipeline holding green builds of this commit.
            raise BadInput(
                "[ci] buildkite of the checkout is not honoured in an untrusted checkout",
                hint="pass --pipeline org/pipeline (the job's own)",
            )
        pipeline = checkout.ci_buildkite
    if pipeline is not None and ws.settings.buildkite.token is not None:
        buildkite.check_pipeline(pipeline, "--pipeline")
        builds = buildkite.builds_of_commit(pipeline, bound, ws.settings.buildkite)
        chosen = [b for b in builds if request.build in (None, b.number)]
        if not chosen:
            which = f"build #{request.build}" if request.build is not None else "no build"
            raise BadInput(f"{pipeline}: {which} of commit {bound[:12]} found")
        rec = summarise_buildkite(chosen[0], bound, now())
    elif pipeline is not None and request.build is not None:
        raise BadInput(f"--build needs {buildkite.TOKEN_ENV} set to read {pipeline}")
    else:
        from vimesync.ci.evidence import choose_repo
        from vimesync.github import GitHubClient

        job = ws.settings.job_repository
        repo = choose_repo(request.repo, checkout.ci_repo, untrusted=ws.untrusted, job=job, what="--ci-repo")
        if repo is None:
            raise BadInput(
                "no CI to read: name a Buildkite pipeline ([ci] buildkite, with BUILDKITE_API_TOKEN)"
                " or a GitHub repository (--ci-repo, or [ci] repo)"
            )
        client = GitHubClient(repo, ws.settings.github)
        try:
            checks = client.commit_checks(bound)
        finally:
            client.close()
        rec = summarise_checks(checks.check_runs, bound, now())
    path = write_table(ws.sop_root, name, "ci", rec.build, rec.sha, ci_values(rec))
    return RecordResult(sync=name, record=rec, file=path, head=head, kind=Kind.RECORD_CI)
