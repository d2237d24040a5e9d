"""``vimesync sop record ci`` as a use case: a snapshot of the CI jobs behind the evidence head,
recorded in ``sop/records/<sync>.toml`` (:mod:`vimesync.sop.cirecords`).

From Buildkite when a pipeline is named (``--pipeline``, else ``[ci] buildkite``) and
``BUILDKITE_API_TOKEN`` is set: the newest build of exactly that commit (or ``--build N``), its
jobs counted by their last attempt, an agent lost (exit -1) told apart from a failed test. Else
from the commit's GitHub check runs (``--ci-repo``, else ``[ci] repo``; ``GITHUB_TOKEN``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vimesync.app.context import SyncRequest, load, resolve
from vimesync.app.evidence import RecordResult, heads
from vimesync.app.result import Kind
from vimesync.errors import BadInput
from vimesync.sop.gatesfile import sop_root
from vimesync.sop.results import now


@dataclass(frozen=True)
class RecordCiRequest:
    pipeline: str | None = None  # org/pipeline (default: [ci] buildkite)
    build: int | None = None  # a Buildkite build number (default: the newest of the commit)
    ci_repo: str | None = None  # the GitHub repository whose check runs are read without Buildkite
    sync: SyncRequest = field(default_factory=SyncRequest)


def record_ci_jobs(request: RecordCiRequest) -> RecordResult:
    """Read the evidence head's CI jobs and record their counts for it."""
    from vimesync import buildkite
    from vimesync.settings import Settings
    from vimesync.sop.cirecords import ci_values, summarise_buildkite, summarise_checks
    from vimesync.sop.results import write_table

    if request.build is not None and not 0 <= request.build < 10**9:
        raise BadInput(f"--build {request.build}: expected a Buildkite build number")
    settings = Settings.capture()  # workspace: passed down once the workspace lands
    checkout = load(request.sync)
    ctx = resolve(request.sync, config=checkout)
    name = ctx.sync_name()
    head, bound = heads(ctx, checkout)
    if not bound:
        raise BadInput("no head to record CI for (run inside the downstream, or pass --head)")
    pipeline = request.pipeline
    if pipeline is None and checkout.ci_buildkite is not None:
        if settings.untrusted:
            # A pull request could name another pipeline holding green builds of this commit.
            raise BadInput(
                "[ci] buildkite of the checkout is not honoured in an untrusted checkout",
                hint="pass --pipeline org/pipeline (the job's own)",
            )
        pipeline = checkout.ci_buildkite
    if pipeline is not None and settings.buildkite.token is not None:
        buildkite.check_pipeline(pipeline, "--pipeline")
        builds = buildkite.builds_of_commit(pipeline, bound, settings.buildkite)
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

        job, untrusted = settings.job_repository, settings.untrusted
        repo = choose_repo(request.ci_repo, checkout.ci_repo, job=job, untrusted=untrusted, what="--ci-repo")
        if repo is None:
            raise BadInput(
                "no CI to read: name a Buildkite pipeline ([ci] buildkite, with BUILDKITE_API_TOKEN)"
                " or a GitHub repository (--ci-repo, or [ci] repo)"
            )
        client = GitHubClient(repo, settings.github)
        try:
            checks = client.commit_checks(bound)
        finally:
            client.close()
        rec = summarise_checks(checks.check_runs, bound, now())
    path = write_table(sop_root(checkout), name, "ci", rec.build, rec.sha, ci_values(rec))
    return RecordResult(sync=name, record=rec, file=path, head=head, kind=Kind.RECORD_CI)
