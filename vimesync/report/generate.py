"""Run what a sync report needs — the upstream walk, the patch-stack check, the changed-path
audit — and assemble the :class:`SyncReport`. No printing; a section whose inputs are missing
becomes a one-line Skipped instead of an error.

This is the one call behind ``vimesync report`` and ``vimesync demo``::

    report = generate_report(ReportInputs(config=cfg, downstream=..., baseline=..., check=opts))
    print(render_markdown(report))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.audit.compare import default_sync_name, load_excluded_globs, run_audit
from vimesync.audit.model import AuditResult
from vimesync.audit.syncname import upstream_base_of
from vimesync.check.model import CheckOptions, CheckReport, ProgressFn
from vimesync.check.run import run_check
from vimesync.ci.verdict import CiEvidence
from vimesync.config import Config
from vimesync.errors import BadInput, GitHubError
from vimesync.pins import pinned_at
from vimesync.repopaths import repository_path
from vimesync.report.links import github_repo_of
from vimesync.report.model import CI_NOT_ASKED, EnginePatches, Skipped, SyncReport, build_engine, build_report
from vimesync.upstream.model import WalkResult


@dataclass(frozen=True)
class ReportInputs:
    """Everything already resolved (flags over config); ``None`` means "not given"."""

    config: Config = field(default_factory=Config)
    upstream: Path | None = None  # default: config
    range_: str | None = None  # BASE..TIP; default: the pin's synced..branch
    policy: Path | None = None  # default: config
    downstream: Path | None = None  # default: config
    baseline: str | None = None  # the pre-sync downstream commit: needed for the audit
    head: str = "HEAD"
    path_map: tuple[tuple[str, str], ...] | None = None  # default: config
    sync: str | None = None  # ledger name; default: <upstream base8>..<tip8>
    check: CheckOptions | None = None  # None: no engine source/series given
    series: Path | None = None  # without a source: the patch table from the series alone
    strip: int | None = None  # default -pN for ``series`` (default: the engine pin's)
    pr_metadata: Path | None = None
    github: bool = False
    ci: CiRequest | None = None  # None: exact-head CI not asked for


@dataclass(frozen=True)
class CiRequest:
    """Read the CI of the report's head on GitHub: ``repo`` (owner/name), optionally the PR whose
    head it must be (its earlier commits' results are listed as not evidence)."""

    repo: str
    pr: int | None = None
    required: tuple[str, ...] = ()


def engine_from_series(
    series: Path, *, strip: int, config: Config, previous_pin: str | None
) -> EnginePatches:
    """The Engine patches table from the series file and each patch's DEP-3 header, without a
    source to apply to (so nothing is verified: the Validation section says so)."""
    from vimesync.patches.diffparse import parse_patch
    from vimesync.patches.series import load_series, read_patch

    rows = []
    for entry in load_series(series, default_strip=strip).entries:
        patch = parse_patch(read_patch(entry), name=entry.name, strip=entry.strip)
        rows.append((entry.name, patch.dep3))
    return build_engine(
        rows,
        engine=config.engine.name,
        pin=config.engine.rev,
        source=str(series),
        engine_repo=config.engine.repo,
        previous_pin=previous_pin,
    )


def _remote_repo(repo: Path) -> str | None:
    """``owner/repo`` from the clone's ``origin`` remote when it is on github.com."""
    url = git.run(repo, ["config", "--get", "remote.origin.url"], check=False).decode().strip()
    return github_repo_of(url) if url else None


def _walk(inputs: ReportInputs) -> WalkResult:
    from vimesync.upstream.pipeline import walk_and_classify

    return walk_and_classify(
        inputs.upstream,
        inputs.range_,
        policy=inputs.policy,
        downstream=inputs.downstream,
        pr_metadata=inputs.pr_metadata,
        github=inputs.github,
        config=inputs.config,
        # PRs this sync carries are applicable, not "already mirrored": look at the pre-sync downstream.
        downstream_rev=inputs.baseline,
    )


def ci_evidence(request: CiRequest | None, downstream: Path | None, head: str) -> CiEvidence | Skipped:
    """The exact-head CI of the report's head, or why it was not checked (never an error: an
    unreadable GitHub leaves the gate not checked, which fails the report all the same)."""
    from vimesync.ci.evidence import client_for, read_evidence
    from vimesync.github import token_from_env

    if request is None:
        return Skipped(CI_NOT_ASKED)
    if downstream is None:
        return Skipped("No downstream repository was given: the head is unknown, CI not checked.")
    if token_from_env() is None:
        return Skipped("No GitHub token in the environment (GITHUB_TOKEN or GH_TOKEN): CI not checked.")
    sha = git.resolve(downstream, head)
    try:
        client = client_for(request.repo)
        try:
            return read_evidence(client, sha=sha, pr=request.pr, required=request.required)
        finally:
            client.close()
    except (GitHubError, BadInput) as exc:
        return Skipped(f"CI not checked: {exc.message}")


def generate_report(inputs: ReportInputs, *, progress: ProgressFn | None = None) -> SyncReport:
    """Walk, check and audit what ``inputs`` allow, then build the report."""
    cfg = inputs.config
    upstream = repository_path(inputs.upstream, cfg, "upstream_path")
    downstream = repository_path(inputs.downstream, cfg, "downstream_path")
    skipped: dict[str, str] = {}

    walk = _walk(inputs) if upstream is not None else None
    if upstream is None:
        skipped["summary"] = "No upstream repository was given (--upstream): no summary."

    check: CheckReport | None = run_check(inputs.check, progress=progress) if inputs.check else None

    audit: AuditResult | None = None
    if downstream is None or inputs.baseline is None or upstream is None:
        missing = [
            flag
            for flag, value in (
                ("--downstream", downstream),
                ("--baseline", inputs.baseline),
                ("--upstream", upstream),
            )
            if value is None
        ]
        skipped["audit"] = f"No {', '.join(missing)} given: no audit of the changed paths."
    else:
        tip = walk.tip if walk else (cfg.upstream_branch or "HEAD")
        base = upstream_base_of(
            cfg,
            upstream=upstream,
            tip=tip,
            downstream=downstream,
            baseline=inputs.baseline,
            # An explicit --range names the base; otherwise the pins decide (as `vimesync audit` does).
            upstream_base=walk.base if walk and inputs.range_ and walk.base != git.NULL_SHA else None,
        )
        audit = run_audit(
            downstream,
            inputs.baseline,
            inputs.head,
            upstream,
            tip,
            sync=inputs.sync or default_sync_name(base, git.resolve(upstream, tip)),
            upstream_base=base,
            path_map=inputs.path_map if inputs.path_map is not None else cfg.path_map,
            excluded_globs=load_excluded_globs(inputs.policy or cfg.policy),
        )

    previous_pin = None
    if downstream is not None and inputs.baseline is not None:
        previous_pin = pinned_at(downstream, inputs.baseline, cfg.engine.file, "engine", "rev")
    series = None
    if check is None and inputs.series is not None:
        strip = cfg.engine.strip if inputs.strip is None else inputs.strip
        series = engine_from_series(inputs.series, strip=strip, config=cfg, previous_pin=previous_pin)
        skipped["validation"] = "No engine source was given (--source): the patch stack was not applied."

    upstream_repo = cfg.upstream_repo or (_remote_repo(upstream) if upstream is not None else None)
    return build_report(
        walk=walk,
        check=check,
        audit=audit,
        upstream_name=cfg.upstream_name if cfg.file or not upstream_repo else upstream_repo.split("/")[1],
        upstream_repo=upstream_repo,
        engine_repo=cfg.engine.repo,
        previous_engine_pin=previous_pin,
        series=series,
        skipped=skipped,
        ci=ci_evidence(inputs.ci, downstream, inputs.head),
    )
