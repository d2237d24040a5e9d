"""``vimesync sop``: the sync procedure (sop/SYNC.md) as gates — ``status`` evaluates them in
order, ``record image``, ``record tests``, ``record run``, ``record ci`` and ``record precommit``
record the evidence of the sync head (container images, JUnit suites, manual runs, a snapshot of
the CI jobs, pre-commit on the changed files), ``regress`` a before/after test matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    ArchOpt,
    BaselineOpt,
    BeforeOpt,
    BlockedOpt,
    BuildHostOpt,
    BuildOpt,
    CiPrOpt,
    CiRepoOpt,
    ConfigOpt,
    DigestOpt,
    DurationOpt,
    ExitOpt,
    FigureOpt,
    FormatOpt,
    HeadOpt,
    HostOpt,
    ImageDigestOpt,
    ImageRefOpt,
    JsonOpt,
    JunitInOpt,
    JunitOpt,
    MatrixNameOpt,
    NoteOpt,
    PipelineOpt,
    PreCommitOpt,
    PrecommitTimeoutOpt,
    PromoteDigestOpt,
    PromoteRefOpt,
    RegistryInsecureOpt,
    RegressTimeoutOpt,
    RequireOpt,
    RunNameOpt,
    ShaOpt,
    SkipGateOpt,
    SourceOpt,
    SuiteOpt,
    SyncOpt,
    TestIdOpt,
    TestPythonOpt,
    UpstreamOpt,
    VerifyImageOpt,
    output_format,
)

if TYPE_CHECKING:
    from vimesync.app.evidence import RecordResult
    from vimesync.report.checklist import SopStatus


_MARK = {
    "held": ("✓", "bold green"),
    "failed": ("✗", "bold red"),
    "not checked": ("not run", "yellow"),
    "off": ("off", "dim"),
}


def status(
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    source: SourceOpt = None,
    ci_repo: CiRepoOpt = None,
    ci_pr: CiPrOpt = None,
    require: RequireOpt = None,
    skip_gate: SkipGateOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Evaluate the sync's gates in order — classified, carried, patches, audit, tests, ci, images —
    print a checklist with the command that moves each unmet gate. Exit 0 when all hold."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.status import StatusRequest, sop_status
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.outputs.findings import gate_findings

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    request = StatusRequest(
        sync=SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync),
        source=source,
        ci_repo=ci_repo,
        ci_pr=ci_pr,
        require=tuple(require or ()),
        skip_gate=tuple(skip_gate or ()),
    )
    result = sop_status(request)
    for note in result.notes:
        output.warn(note)
    if json_out:
        output.emit_json(result.to_json())
    else:
        with ci.human_output():
            _render_status(result.status)
    ci.emit(gate_findings(result.status.gates))
    return result.exit_code


def _render_status(status: SopStatus) -> None:
    con = output.stdout
    con.print(output.styled(("Sync ", "bold"), (status.sync, "bold"), f" at head {status.head[:8]}"))
    for g in status.gates:
        mark, style = _MARK[g.state]
        con.print(output.styled((f"{mark:>7} ", style), (f"{g.name:<10}", "bold"), " ", g.detail))
        if g.command:
            con.print(output.styled(" " * 19, ("→ ", "dim"), (g.command, "cyan")))
    verdict = "all gates hold" if status.ok else f"{sum(not g.ok for g in status.gates)} gates not met"
    con.print(
        output.styled(
            ("OK" if status.ok else "NOT READY", "bold green" if status.ok else "bold red"),
            f": {verdict}.",
        )
    )


def record_image(
    arch: ArchOpt,
    digest: DigestOpt = None,
    blocked: BlockedOpt = None,
    host: BuildHostOpt = None,
    ref: ImageRefOpt = None,
    verify: VerifyImageOpt = False,
    registry_insecure: RegistryInsecureOpt = False,
    sha: ShaOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record a container image built from the sync head (or, with --blocked, why the
    architecture has none) in sop/records/<sync>.toml."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.images import RecordImageRequest, record_image_evidence

    json_out = output_format(fmt, json_) == "json"
    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    request = RecordImageRequest(
        arch=arch,
        digest=digest,
        ref=ref,
        sha=sha,
        blocked=blocked,
        host=host,
        verify=verify,
        registry_insecure=registry_insecure,
        sync=sync_req,
    )
    result = record_image_evidence(request)
    if json_out:
        output.emit_json(result.to_json())
    else:
        from vimesync.cli.render.images import render_record_image

        render_record_image(result)
    return result.exit_code


def record_tests(
    suite: SuiteOpt,
    junit_file: JunitInOpt,
    image: ImageDigestOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record a test suite's JUnit XML (counts, duration, failing ids) for the sync head in
    sop/records/<sync>.toml."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.evidence import RecordTestsRequest, record_test_suite

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    result = record_test_suite(RecordTestsRequest(suite=suite, junit=junit_file, image=image, sync=sync_req))
    return _emit_record(result, output_format(fmt, json_) == "json")


def record_run(
    name: RunNameOpt,
    exit_: ExitOpt,
    duration: DurationOpt = None,
    host: HostOpt = None,
    image: ImageDigestOpt = None,
    figure: FigureOpt = None,
    note: NoteOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record a run no CI sees (its exit status, duration, host, figures) for the sync head in
    sop/records/<sync>.toml."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.evidence import RecordRunRequest, record_manual_run

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    request = RecordRunRequest(
        name=name,
        exit=exit_,
        duration=duration,
        host=host,
        image=image,
        figures=tuple(figure or ()),
        note=note,
        sync=sync_req,
    )
    return _emit_record(record_manual_run(request), output_format(fmt, json_) == "json")


def record_ci(
    pipeline: PipelineOpt = None,
    build: BuildOpt = None,
    ci_repo: CiRepoOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record a snapshot of the CI jobs of the sync head (Buildkite with [ci] buildkite and
    BUILDKITE_API_TOKEN, else its GitHub check runs) in sop/records/<sync>.toml."""
    from vimesync.app.cirecord import RecordCiRequest, record_ci_jobs
    from vimesync.app.context import SyncRequest

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    request = RecordCiRequest(pipeline=pipeline, build=build, ci_repo=ci_repo, sync=sync_req)
    return _emit_record(record_ci_jobs(request), output_format(fmt, json_) == "json")


def record_precommit(
    pre_commit: PreCommitOpt = None,
    timeout: PrecommitTimeoutOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Run pre-commit on the sync's changed files at the head (trusted runs only) and record each
    hook's result in sop/records/<sync>.toml. Exit 1 when a hook failed."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.precommit import RecordPrecommitRequest
    from vimesync.app.precommit import record_precommit as run

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    result = run(RecordPrecommitRequest(pre_commit=pre_commit, timeout=timeout, sync=sync_req))
    return _emit_record(result, output_format(fmt, json_) == "json")


def regress(
    test: TestIdOpt = None,
    before: BeforeOpt = None,
    python: TestPythonOpt = None,
    name: MatrixNameOpt = None,
    timeout: RegressTimeoutOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Run the named tests at the baseline (or --before) and at the head, each in a temporary
    worktree (trusted runs only), and record the before/after matrix. Exit 1 when one fails after."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.regress import RegressRequest
    from vimesync.app.regress import regress as run

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    request = RegressRequest(
        tests=tuple(test or ()), before=before, python=python, name=name, timeout=timeout, sync=sync_req
    )
    return _emit_record(run(request), output_format(fmt, json_) == "json")


def _emit_record(result: RecordResult, json_out: bool) -> int:
    output.notes(result.notes)
    if json_out:
        output.emit_json(result.to_json())
    else:
        from vimesync.cli.render.evidence import render_record

        render_record(result)
    return result.exit_code


def promote(
    ref: PromoteRefOpt,
    digest: PromoteDigestOpt = None,
    verify: VerifyImageOpt = False,
    registry_insecure: RegistryInsecureOpt = False,
    ci_repo: CiRepoOpt = None,
    ci_pr: CiPrOpt = None,
    require: RequireOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    upstream: UpstreamOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Move a floating tag (vllm/vime:latest) to the sync head's images: only when exact-head CI
    is green, every architecture has an image recorded at the head (or is blocked) and the
    evidence gate holds. Records the promotion in sop/records/<sync>.toml; exit 1 when refused."""
    from vimesync.app.context import SyncRequest
    from vimesync.app.promote import PromoteRequest
    from vimesync.app.promote import promote as promote_head

    sync_req = SyncRequest(config=config, upstream=upstream, baseline=baseline, head=head, sync=sync)
    request = PromoteRequest(
        ref=ref,
        digest=digest,
        ci_repo=ci_repo,
        ci_pr=ci_pr,
        require=tuple(require or ()),
        verify=verify,
        registry_insecure=registry_insecure,
        sync=sync_req,
    )
    result = promote_head(request)
    for note in result.notes:
        output.warn(note)
    if output_format(fmt, json_) == "json":
        output.emit_json(result.to_json())
    else:
        from vimesync.cli.render.images import render_promote

        render_promote(result)
    return result.exit_code
