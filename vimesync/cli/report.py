"""``vimesync report``: the sync PR description, every figure computed.

Runs the upstream walk, the patch-stack check and the changed-path audit (each only when its
inputs are given: flags win over vimesync.toml and the pins), then renders markdown or JSON to
stdout or ``--output``, and with ``--publish owner/repo#N`` puts it into that PR's description.

Exit codes: 0 the report was generated and every gate it covers (classified, patches, audit,
ci) was evaluated and holds; 1 the report was generated (and written/published) but a gate
failed (a patch does not apply, a patched Python file does not parse, a changed path is
unreviewed or stale, exact-head CI is not green) or was not checked (no upstream, no source, no
baseline, no token) and not switched off in sop/gates.toml or with ``--skip-gate``; 2 bad input.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    BaselineOpt,
    CiPrOpt,
    CiRepoOpt,
    ConfigOpt,
    DocFormatOpt,
    DownstreamOpt,
    EngineOpt,
    GithubOpt,
    HeadOpt,
    JsonOpt,
    JunitOpt,
    KeepGoingOpt,
    MapOpt,
    OutputOpt,
    PolicyOpt,
    PrMetadataOpt,
    PublishOpt,
    RangeOpt,
    RequireOpt,
    RevOpt,
    SeriesOpt,
    SkipGateOpt,
    SourceOpt,
    StripOpt,
    SyncOpt,
    UpstreamOpt,
    UpstreamRepoOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput

if TYPE_CHECKING:
    from vimesync.check.model import CheckOptions
    from vimesync.config import Config
    from vimesync.report.generate import CiRequest, EngineInput
    from vimesync.report.model import SyncReport
    from vimesync.sop.records import ImageEvidence


def _check_opts(
    cfg: Config,
    source: Path | None,
    rev: str | None,
    series: Path | None,
    strip: int | None,
    keep_going: bool,
) -> CheckOptions | None:
    from vimesync.check.model import check_options

    if (source or cfg.engine.source or cfg.engine.package) is None or (series or cfg.engine.series) is None:
        return None
    return check_options(
        cfg, source=source, rev=rev, series=series, strip=strip, keep_going=keep_going, require_exact=True
    )


def _engine_inputs(
    cfg: Config, engine: str | None, flags: dict[str, Any], keep_going: bool = False
) -> tuple[EngineInput, ...]:
    """Every engine of a config that names several (or the one ``--engine`` names): checked when
    it has a source, else its series alone. With several engines a flag cannot say which engine
    it is for, so it is refused (check_plan says so, naming them)."""
    from vimesync.check.model import check_plan
    from vimesync.config import select_engine
    from vimesync.report.generate import EngineInput

    given = {k: v for k, v in flags.items() if v is not None}
    if engine is None and given:
        check_plan(cfg, **given)  # raises, naming the engines
    pins = [select_engine(cfg, engine)] if engine else list(cfg.engines)
    inputs = []
    for pin in pins:
        source = given.get("source") or pin.source or pin.package
        series = given.get("series") or pin.series
        if source and series:
            (opts,) = check_plan(
                cfg, engine=pin.key or pin.name, require_exact=True, keep_going=keep_going, **given
            )
            inputs.append(EngineInput(pin=pin, check=opts))
        else:
            inputs.append(EngineInput(pin=pin, series=series, strip=given.get("strip")))
    return tuple(inputs)


def report(
    upstream: UpstreamOpt = None,
    range_: RangeOpt = None,
    upstream_repo: UpstreamRepoOpt = None,
    policy: PolicyOpt = None,
    downstream: DownstreamOpt = None,
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    map_: MapOpt = None,
    sync: SyncOpt = None,
    engine: EngineOpt = None,
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    keep_going: KeepGoingOpt = False,
    pr_metadata: PrMetadataOpt = None,
    github: GithubOpt = False,
    fmt: DocFormatOpt = None,
    json_: JsonOpt = False,
    out_file: OutputOpt = None,
    publish: PublishOpt = None,
    config: ConfigOpt = None,
    ci_repo: CiRepoOpt = None,
    ci_pr: CiPrOpt = None,
    require: RequireOpt = None,
    skip_gate: SkipGateOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Write the sync PR description: summary, engine patches, final audit, validation and gates."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.cli.progress import parse_progress
    from vimesync.config import load_config, parse_map
    from vimesync.github import is_repo_name
    from vimesync.report.document import render_json
    from vimesync.report.generate import ReportInputs, generate_report
    from vimesync.report.markdown import render_markdown
    from vimesync.safefs import check_output_path, write_atomic
    from vimesync.sop.gatesfile import gates_of, ignored_off, skip_flags

    as_json = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=as_json and out_file is None)
    if publish is not None:
        from vimesync.report.publish import parse_target, require_token

        parse_target(publish)  # fail on a bad target before any work
        require_token()
    if out_file is not None:
        # Before any work: a symlink there (or on a folder inside the checkout) is refused.
        check_output_path(out_file, what="--output")
    cfg = load_config(config)
    gates_cfg = gates_of(cfg)
    gates_off = skip_flags(skip_gate, gates_cfg)
    for name in ignored_off(gates_cfg):
        output.warn(
            f"sop/gates.toml switches {name} off, not honoured in an untrusted checkout:"
            f" pass --skip-gate {name}"
        )
    required = tuple(require or ()) or cfg.ci_required or gates_cfg.required
    ci_request = _ci_request(cfg, ci_repo, ci_pr, publish, required)
    if upstream_repo is not None:
        if not is_repo_name(upstream_repo):
            raise BadInput(f"--upstream-repo {upstream_repo!r}: expected owner/name, e.g. THUDM/slime")
        cfg = replace(cfg, upstream_repo=upstream_repo)
    several = len(cfg.engines) > 1 or engine is not None
    flags = {"source": source, "rev": rev, "series": series, "strip": strip}
    opts = None if several else _check_opts(cfg, source, rev, series, strip, keep_going)
    inputs = ReportInputs(
        config=cfg,
        upstream=upstream,
        range_=range_,
        policy=policy,
        downstream=downstream,
        baseline=baseline,
        head=head,
        path_map=parse_map(map_) if map_ else None,
        sync=sync,
        check=opts,
        series=(series or cfg.engine.series) if opts is None else None,
        strip=strip,
        pr_metadata=pr_metadata,
        github=github,
        engines=_engine_inputs(cfg, engine, flags, keep_going) if several else (),
        ci=ci_request,
    )
    with parse_progress(enabled=output.progress_enabled()) as progress:
        result = replace(generate_report(inputs, progress=progress), gates_off=gates_off)
    result = replace(result, images=_images(cfg, result, gates_cfg.architectures))
    markdown = render_markdown(result)
    text = json.dumps(render_json(result), indent=2) + "\n" if as_json else markdown
    if out_file is not None:
        write_atomic(out_file, text.encode("utf-8"), what="--output")
        output.stderr.print(output.styled(f"wrote {out_file}"))
    elif as_json:
        output.emit_json(render_json(result))
    else:
        with ci.human_output():
            output.stdout.file.write(text)
            output.stdout.file.flush()
    if publish is not None:
        from vimesync.report.publish import publish as do_publish

        done = do_publish(publish, markdown)
        verb = "updated" if done.changed else "already up to date:"
        output.stderr.print(output.styled(f"{verb} {done.url or done.target}"))
    from vimesync.outputs.findings import gate_findings

    ci.emit(gate_findings(result.gates, summary=markdown))
    return EXIT_OK if result.gates_ok else EXIT_CHECK_FAILED


def _images(cfg: Config, result: SyncReport, architectures: tuple[str, ...]) -> ImageEvidence | None:
    """The image records of this sync for its head (only with an audit: it names sync and head)."""
    from vimesync.audit.model import AuditResult
    from vimesync.sop.gatesfile import sop_root
    from vimesync.sop.records import image_evidence

    if not isinstance(result.audit, AuditResult) or cfg.file is None:
        return None
    return image_evidence(sop_root(cfg), result.audit.sync, result.audit.head, architectures)


def _ci_request(
    cfg: Config, repo: str | None, pr: int | None, publish: str | None, required: tuple[str, ...]
) -> CiRequest | None:
    """Where to read the head's CI: --ci-repo, else the --publish target's repo (whose PR is then
    the one whose head the report must be), else [ci] repo (see ``choose_repo``); None when none."""
    from vimesync.ci.evidence import choose_repo
    from vimesync.report.generate import CiRequest

    if publish is not None and (repo is None or pr is None):
        from vimesync.report.publish import parse_target

        target_repo, number = parse_target(publish)
        repo, pr = repo or target_repo, pr or number
    repo = choose_repo(repo, cfg.ci_repo, what="--ci-repo")
    if repo is None:
        return None
    return CiRequest(repo=repo, pr=pr, required=required)
