"""``vimesync sop record ci`` as a use case: a snapshot of the CI jobs behind the evidence head,
recorded in ``sop/records/<sync>.toml`` (:mod:`vimesync.sop.cirecords`).

From Buildkite when a pipeline is named (``--pipeline``, else ``[ci] buildkite``) and
``BUILDKITE_API_TOKEN`` is set: the newest build of the head, else of the nearest commit below
it down to the evidence head (the records-only commits on top of it hold its code), or
``--build N`` when it ran on a commit whose evidence head is the head's; its jobs counted by
their last attempt, an agent lost (exit -1) told apart from a failed test, the build's own state
deciding whether it passed. Else from the evidence head's GitHub check runs (``--ci-repo``,
else ``[ci] repo``; ``GITHUB_TOKEN``), each named with its workflow. Either way counted by step
too (:mod:`vimesync.sop.cigroups`: ``[[ci.groups]]`` of the checkout's config, else the jobs'
own group or step keys, or workflows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.app.evidence import RecordResult, evidence_heads
from vimesync.app.flags import CiFlags
from vimesync.app.result import Kind
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput
from vimesync.sop.records import SHA
from vimesync.sop.results import now

if TYPE_CHECKING:
    from vimesync.buildkite import Build
    from vimesync.github import CheckRun, GitHubClient


def record_ci_jobs(ws: Workspace, request: CiFlags, *, replace: bool = False) -> RecordResult:
    """Read the evidence head's CI jobs and record their counts for it: ``request.pipeline``
    (default: [ci] buildkite) and ``request.build`` (default: the newest of the head, else of
    the nearest commit down to the evidence head) on
    Buildkite, else the GitHub check runs of ``request.repo`` (default: [ci] repo). A snapshot
    of the same build at the evidence head is replaced only with ``replace``; the tree must be
    HEAD's (:mod:`vimesync.app.recordchecks`)."""
    from vimesync import buildkite
    from vimesync.app.recordchecks import refuse_modified, replaced_record
    from vimesync.sop.cirecords import ci_values, summarise_buildkite, summarise_checks
    from vimesync.sop.results import write_table

    if request.build is not None and not 0 <= request.build < 10**9:
        raise BadInput(f"--build {request.build}: expected a Buildkite build number")
    checkout = ws.checkout
    name = ws.sync_name
    head, bound = evidence_heads(ws)
    if not bound:
        raise BadInput("no head to record CI for (run inside the downstream, or pass --head)")
    refuse_modified(ws.downstream, ws.bookkeeping, name)
    pipeline = request.pipeline
    if pipeline is None and checkout.ci_buildkite is not None:
        if ws.untrusted:
            # A pull request could name another pipeline holding green builds of this commit.
            raise BadInput(
                "[ci] buildkite of the checkout is not honoured in an untrusted checkout",
                hint="pass --pipeline org/pipeline (the job's own)",
            )
        pipeline = checkout.ci_buildkite
    notes: tuple[str, ...] = ()
    if pipeline is not None and ws.settings.buildkite.token is not None:
        buildkite.check_pipeline(pipeline, "--pipeline")
        build = _chosen_build(ws, pipeline, request.build, head, bound)
        rec = summarise_buildkite(build, bound, now(), checkout.ci_groups)
        if build.commit != bound:
            notes = (
                f"build #{build.number} ran on {build.commit[:12]}, which adds only bookkeeping to the"
                f" evidence head {bound[:12]}: recorded for {bound[:12]}",
            )
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
            runs, notes = _runs_by_workflow(client, bound)
        finally:
            client.close()
        rec = summarise_checks(runs, bound, now(), checkout.ci_groups)
    old = replaced_record(ws.sop_root, name, "ci", rec.name, rec.sha, replace=replace)
    path = write_table(ws.sop_root, name, "ci", rec.build, rec.sha, ci_values(rec))
    result = RecordResult(sync=name, record=rec, file=path, head=head, kind=Kind.RECORD_CI, notes=notes)
    return result.replacing("ci", old)


def _runs_by_workflow(client: GitHubClient, sha: str) -> tuple[list[CheckRun], tuple[str, ...]]:
    """The check runs of ``sha``, each with its workflow's name (GitHub Actions' workflow runs of
    ``sha``); when those cannot be read, by their app, said in a note."""
    from dataclasses import replace

    from vimesync.errors import GitHubError

    runs = client.commit_checks(sha).check_runs
    try:
        names = client.workflow_names(sha) if runs else {}
    except GitHubError:
        return list(runs), ("the workflow runs could not be read: check runs are grouped by their app",)
    named = [replace(r, workflow=names.get(r.suite, "")) if r.suite is not None else r for r in runs]
    return named, ()


MAX_COMMITS = 20  # commits between the head and its evidence head whose builds are looked up


def _chosen_build(ws: Workspace, pipeline: str, number: int | None, head: str, bound: str) -> Build:
    """Build ``number`` (it must have run on a commit whose evidence head is ``bound``), else the
    newest build of the head, else of the nearest commit below it down to the evidence head
    (records-only commits on top of the evidence head: the code they hold is its code)."""
    from vimesync import buildkite

    settings = ws.settings.buildkite
    if number is not None:
        build = buildkite.build_by_number(pipeline, number, settings)
        if build is None:
            raise BadInput(f"{pipeline}: there is no build #{number}")
        _check_build_commit(ws, pipeline, build, head, bound)
        return build
    for sha in _commits_to(ws, head, bound):
        builds = buildkite.builds_of_commit(pipeline, sha, settings)
        if builds:
            return builds[0]
    below = f" nor of the commits down to its evidence head {bound[:12]}" if head != bound else ""
    raise BadInput(
        f"{pipeline}: no build of the head {head[:12]}{below}",
        hint="run the pipeline on the head, or pass --build N (a build of the head or of its evidence head)",
    )


def _commits_to(ws: Workspace, head: str, bound: str) -> list[str]:
    """The head, then its first parents down to ``bound`` (at most :data:`MAX_COMMITS`)."""
    from vimesync import git

    if ws.downstream is None or head == bound:
        return [head]
    out = git.run(ws.downstream, ["rev-list", "--first-parent", f"--max-count={MAX_COMMITS}", head, "--"])
    chain: list[str] = []
    for sha in out.decode("ascii", "replace").split():
        chain.append(sha)
        if sha == bound:
            return chain
    return [*chain[: MAX_COMMITS - 1], bound]


def _check_build_commit(ws: Workspace, pipeline: str, build: Build, head: str, bound: str) -> None:
    """BadInput unless ``build`` ran on a commit whose evidence head is ``bound``."""
    from vimesync import git
    from vimesync.sop.binding import evidence_head

    where = f"{pipeline}: build #{build.number} ran on"
    if build.commit in (head, bound):
        return
    if not SHA.fullmatch(build.commit):
        raise BadInput(f"{where} no commit Buildkite names by its full sha: it is evidence for no head")
    code = 1
    if ws.downstream is not None:
        code = git.run_status(ws.downstream, ["cat-file", "-e", f"{build.commit}^{{commit}}"])[0]
    if code != 0 or ws.downstream is None:
        raise BadInput(
            f"{where} {build.commit[:12]}, a commit this repository does not hold:"
            f" it is not evidence for {bound[:12]}",
            hint="fetch that commit, or record a build of the head",
        )
    other = evidence_head(ws.downstream, build.commit, ws.bookkeeping)
    if other != bound:
        raise BadInput(
            f"{where} {build.commit[:12]}, whose evidence head is {other[:12]}, not {bound[:12]}"
            f" (the head {head[:12]}'s): its jobs are no evidence for this head",
            hint="record a build of the head, or of a commit that adds only records or review ledgers to it",
        )
