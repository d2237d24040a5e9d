"""``vimesync sop``: the sync procedure (sop/SYNC.md) as gates — ``status`` evaluates them in
order, ``record image``, ``record tests``, ``record run``, ``record ci`` and ``record precommit``
record the evidence of the sync head (container images, JUnit suites, manual runs, a snapshot of
the CI jobs, pre-commit on the changed files), ``regress`` a before/after test matrix, and
``promote`` moves a floating tag to the head's images when the gates allow it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vimesync.cli.groups import CI, ENGINE, OUTPUT, SYNC
from vimesync.cli.options import (
    ImageDigestOpt,
    JunitInOpt,
    PreCommitOpt,
    PrecommitTimeoutOpt,
    PromoteDigestOpt,
    PromoteRefOpt,
    RegistryInsecureOpt,
    ReplaceOpt,
    SuiteOpt,
    VerifyImageOpt,
)
from vimesync.cli.ownoptions import IMAGE, REGRESS, RUN

if TYPE_CHECKING:
    from vimesync.app.evidence import RecordRunRequest
    from vimesync.app.flags import CiFlags, EngineFlags, OutputFlags, SyncFlags
    from vimesync.app.images import RecordImageRequest
    from vimesync.app.regress import RegressRequest
    from vimesync.app.syncpoint import BaselineRule
    from vimesync.app.workspace import Reading
    from vimesync.settings import Settings

# The flags that name the sync whose head a record is for.
HEAD = ("head", "baseline", "sync", "upstream", "downstream", "config")
# What ``sop status`` evaluates is the report's gates: it takes the report's flags.
REPORT_SYNC = (
    *("upstream", "range_", "upstream_repo", "policy", "downstream", "baseline", "head", "path_map"),
    *("sync", "pr_metadata", "github", "config"),
)
REPORT_ENGINE = ("engine", "source", "rev", "series", "strip", "python", "keep_going")


def status(
    settings: Settings,
    sync: SyncFlags = SYNC.take(*REPORT_SYNC),
    engine: EngineFlags = ENGINE.take(*REPORT_ENGINE),
    ci: CiFlags = CI.take("repo", "pr", "require", "skip_gate"),
    out: OutputFlags = OUTPUT.take("format", "json", "junit", "annotations"),
) -> int:
    """Evaluate the sync's gates in order — classified, carried, patches, audit, tests, ci, images —
    print a checklist with the command that moves each unmet gate. Exit 0 when all hold."""
    from vimesync.app.status import StatusRequest, sop_status
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.status import render_status

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, reading="head", baseline="sync") as ws:
        result = sop_status(ws, StatusRequest(engine=engine, ci=ci), progress=emit.progress())
    return emit.result(result, render_status)


def record_image(
    settings: Settings,
    request: RecordImageRequest = IMAGE,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Record a container image built from the sync head (or, with --blocked, why the
    architecture has none) in sop/records/<sync>.toml."""
    from vimesync.app.images import record_image_evidence
    from vimesync.cli.render.images import render_record_image

    return _record(settings, sync, out, lambda ws: record_image_evidence(ws, request), render_record_image)


def record_tests(
    settings: Settings,
    suite: SuiteOpt,
    junit_file: JunitInOpt,
    image: ImageDigestOpt = None,
    replace: ReplaceOpt = False,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Record a test suite's JUnit XML (counts, duration, failing ids) for the sync head in
    sop/records/<sync>.toml (refused while tracked files differ from HEAD)."""
    from vimesync.app.evidence import RecordTestsRequest, record_test_suite

    request = RecordTestsRequest(suite=suite, junit=junit_file, image=image, replace=replace)
    return _record(settings, sync, out, lambda ws: record_test_suite(ws, request))


def record_run(
    settings: Settings,
    request: RecordRunRequest = RUN,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Record a run no CI sees for the sync head in sop/records/<sync>.toml: run the job given
    after -- at the head and record what was measured (its output teed to stderr; exit 1 when it
    did not do as expected), or, with --exit, a run typed by hand."""
    from vimesync.app.runjob import record_run as run
    from vimesync.cli.output import tee_stderr

    return _record(settings, sync, out, lambda ws: run(ws, request, tee=tee_stderr))


def record_ci(
    settings: Settings,
    ci: CiFlags = CI.take("pipeline", "build", "repo"),
    replace: ReplaceOpt = False,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Record a snapshot of the CI jobs of the sync head (Buildkite with [ci] buildkite and
    BUILDKITE_API_TOKEN, else its GitHub check runs) in sop/records/<sync>.toml, counted by step
    (group or step key, workflow) or by [[ci.groups]]."""
    from vimesync.app.cirecord import record_ci_jobs

    return _record(settings, sync, out, lambda ws: record_ci_jobs(ws, ci, replace=replace))


def record_precommit(
    settings: Settings,
    pre_commit: PreCommitOpt = None,
    timeout: PrecommitTimeoutOpt = None,
    replace: ReplaceOpt = False,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Run pre-commit on the sync's changed files at the head (trusted runs only) and record each
    hook's result in sop/records/<sync>.toml. Exit 1 when a hook failed."""
    from vimesync.app.precommit import RecordPrecommitRequest
    from vimesync.app.precommit import record_precommit as run
    from vimesync.cli.progress import progress_for

    request = RecordPrecommitRequest(pre_commit=pre_commit, timeout=timeout, replace=replace)
    progress = progress_for(out.as_json)
    use_case = lambda ws: run(ws, request, progress=progress)  # noqa: E731
    return _record(settings, sync, out, use_case, reading="head", baseline="required")


def regress(
    settings: Settings,
    request: RegressRequest = REGRESS,
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Run the named tests at the baseline (or --before) and at the head, each in a temporary
    worktree (trusted runs only), and record the before/after matrix. Exit 1 when one fails after."""
    from vimesync.app.regress import regress as run
    from vimesync.cli.progress import progress_for

    rule: BaselineRule = "optional" if request.before is not None else "required"
    progress = progress_for(out.as_json)
    return _record(settings, sync, out, lambda ws: run(ws, request, progress=progress), baseline=rule)


def promote(
    settings: Settings,
    ref: PromoteRefOpt,
    digest: PromoteDigestOpt = None,
    verify: VerifyImageOpt = False,
    registry_insecure: RegistryInsecureOpt = False,
    ci: CiFlags = CI.take("repo", "pr", "require"),
    sync: SyncFlags = SYNC.take(*HEAD),
    out: OutputFlags = OUTPUT.take("format", "json"),
) -> int:
    """Move a floating tag (vllm/vime:latest) to the sync head's images: only when exact-head CI
    is green, every architecture has an image recorded at the head (or is blocked) and the
    evidence gate holds. Records the promotion in sop/records/<sync>.toml; exit 1 when refused."""
    from vimesync.app.promote import PromoteRequest
    from vimesync.app.promote import promote as promote_head
    from vimesync.cli.render.images import render_promote

    request = PromoteRequest(
        ref=ref, digest=digest, ci=ci, verify=verify, registry_insecure=registry_insecure
    )
    return _record(settings, sync, out, lambda ws: promote_head(ws, request), render_promote, reading="head")


def _record(
    settings: Settings,
    sync: SyncFlags,
    out: OutputFlags,
    run: Any,
    render: Any = None,
    *,
    reading: Reading = "worktree",
    baseline: BaselineRule = "optional",
) -> int:
    """A record's workspace (the head it binds to: HEAD, or --head), its use case, its output."""
    from vimesync.app.workspace import Workspace
    from vimesync.cli.emit import Emit
    from vimesync.cli.render.evidence import render_record

    emit = Emit(out, settings)
    with Workspace.resolve(sync, settings, reading=reading, baseline=baseline) as ws:
        result = run(ws)
    return emit.result(result, render or render_record)
