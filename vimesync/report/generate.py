"""Run what a sync report needs — the upstream walk, the patch-stack check, the changed-path
audit — and assemble the :class:`SyncReport`. No printing; a section whose inputs are missing
becomes a one-line Skipped instead of an error.

This is the one call behind ``vimesync report`` and ``vimesync demo``::

    report = generate_report(ReportInputs(config=cfg, downstream=..., baseline=..., check=opts))
    print(render_markdown(report))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from vimesync import git
from vimesync.audit.compare import default_sync_name, load_excluded_globs, run_audit
from vimesync.audit.model import AuditResult
from vimesync.audit.owncommits import OwnChanges, own_commits
from vimesync.audit.syncname import determine_baseline, upstream_base_of
from vimesync.audit.verify import load_verify
from vimesync.check.model import CheckOptions, CheckReport, ProgressFn, engine_name
from vimesync.check.run import run_check
from vimesync.ci.verdict import CiEvidence
from vimesync.config import Config, EnginePin
from vimesync.errors import BadInput, GitHubError
from vimesync.pins import pin_relpath, pinned_at
from vimesync.repopaths import repository_path
from vimesync.report.links import github_repo_of
from vimesync.report.model import (
    CI_NOT_ASKED,
    EnginePatches,
    Skipped,
    SyncReport,
    build_engine,
    build_report,
    engine_of_check,
)
from vimesync.settings import GitHubSettings
from vimesync.upstream.model import APPLICABLE, MIRRORED, WalkResult
from vimesync.upstream.translate import load_transform


@dataclass(frozen=True)
class EngineInput:
    """One engine of the report: its check (a source was given), else its series alone."""

    pin: EnginePin
    check: CheckOptions | None = None
    series: Path | None = None  # without a source: the patch table from the series alone
    strip: int | None = None  # default -pN for ``series`` (default: the pin's)


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
    github: GitHubSettings | None = None  # read PR metadata from GitHub with these (None: do not)
    # Several engines (vimesync.toml's [[engine]] tables): one input each; when given, ``check``,
    # ``series`` and ``strip`` above are not used.
    engines: tuple[EngineInput, ...] = ()
    ci: CiRequest | None = None  # None: exact-head CI not asked for


@dataclass(frozen=True)
class CiRequest:
    """Read the CI of the report's head on GitHub: ``repo`` (owner/name), optionally the PR whose
    head it must be (its earlier commits' results are listed as not evidence), with ``github``
    (the token: without one the CI is not checked)."""

    repo: str
    github: GitHubSettings
    pr: int | None = None
    required: tuple[str, ...] = ()


def engine_from_series(
    series: Path, *, strip: int, config: Config, previous_pin: str | None, pin: EnginePin | None = None
) -> EnginePatches:
    """The Engine patches table from the series file and each patch's DEP-3 header, without a
    source to apply to (so nothing is verified: the Validation section says so)."""
    from vimesync.patches.diffparse import parse_patch
    from vimesync.patches.series import load_series, read_patch

    rows = []
    for entry in load_series(series, default_strip=strip).entries:
        patch = parse_patch(read_patch(entry), name=entry.name, strip=entry.strip)
        rows.append((entry.name, patch.dep3))
    pin = pin or config.engine
    table = build_engine(
        rows,
        engine=engine_name(pin.name, pin.source),
        pin=pin.rev,
        source=str(series),
        engine_repo=pin.repo,
        previous_pin=previous_pin,
    )
    return replace(table, series=str(series))


def _remote_repo(repo: Path) -> str | None:
    """``owner/repo`` from the clone's ``origin`` remote when it is on github.com."""
    url = git.run(repo, ["config", "--get", "remote.origin.url"], check=False).decode().strip()
    return github_repo_of(url) if url else None


def pin_range(inputs: ReportInputs, downstream: Path | None) -> str | None:
    """``BASE..TIP`` from the upstream pin: ``synced`` as committed at the baseline, through
    ``synced`` as committed at the head (the configured branch tip when the head did not move
    it), so bumping the pin in the sync never empties the report. None: no pin to read (the
    walk's own defaults apply)."""
    cfg = inputs.config
    if inputs.range_ is not None or downstream is None or inputs.baseline is None:
        return inputs.range_
    if not git.is_ancestor(
        downstream, git.resolve(downstream, inputs.baseline), git.resolve(downstream, inputs.head)
    ):
        return None  # a reversed --baseline/--head: the audit says so
    pin = cfg.upstream_pin.file
    base = pinned_at(downstream, inputs.baseline, pin, "upstream", "synced")
    if not base:
        return None
    head = pinned_at(downstream, inputs.head, pin, "upstream", "synced")
    tip = head if head and head != base else (cfg.upstream_branch or "HEAD")
    return f"{base}..{tip}"


_SKIPPED_RE = re.compile(r"^(?:[\w.-]+/[\w.-]+)?#(\d{1,9})\s*$")


def skipped_prs(downstream: Path, baseline: str, head: str) -> frozenset[int]:
    """PRs a carry between ``baseline`` and ``head`` skipped at a conflict (its ``Carry-Skipped``
    trailers, as git reads trailers: the last paragraph of a message)."""
    out = git.run(
        downstream,
        ["log", "--format=%(trailers:key=Carry-Skipped,valueonly,separator=%x00)%x00", f"{baseline}..{head}"],
    )
    found = set()
    for value in out.decode("utf-8", "replace").split("\0"):
        m = _SKIPPED_RE.match(value.strip())
        if m:
            found.add(int(m.group(1)))
    return frozenset(found)


def _carried(inputs: ReportInputs, walk: WalkResult, upstream: Path, downstream: Path) -> frozenset[int]:
    """The applicable PRs (at the baseline) that the head carries."""
    from vimesync.upstream.pipeline import mirrored_at

    applicable = walk.by_status(APPLICABLE)
    marked = mirrored_at(upstream, applicable, downstream, inputs.head, config=inputs.config, base=walk.base)
    return frozenset(pr.number for pr in marked if pr.decision is not None and pr.decision.status == MIRRORED)


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


def _sync_branch_baseline(downstream: Path, head: str) -> str | None:
    """On a sync branch, the commit it left main at (as ``audit`` takes it); else None, and the
    audit is skipped, saying that --baseline was not given."""
    try:
        return determine_baseline(downstream, head)[0]
    except BadInput:
        return None


def ci_evidence(request: CiRequest | None, downstream: Path | None, head: str) -> CiEvidence | Skipped:
    """The exact-head CI of the report's head, or why it was not checked (never an error: an
    unreadable GitHub leaves the gate not checked, which fails the report all the same)."""
    from vimesync.ci.evidence import read_evidence
    from vimesync.github import GitHubClient

    if request is None:
        return Skipped(CI_NOT_ASKED)
    if downstream is None:
        return Skipped("No downstream repository was given: the head is unknown, CI not checked.")
    if request.github.token is None:
        return Skipped("No GitHub token in the environment (GITHUB_TOKEN or GH_TOKEN): CI not checked.")
    sha = git.resolve(downstream, head)
    try:
        client = GitHubClient(request.repo, request.github)
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
    if inputs.baseline is None and downstream is not None:
        inputs = replace(inputs, baseline=_sync_branch_baseline(downstream, inputs.head))

    explicit_range = inputs.range_ is not None
    inputs = replace(inputs, range_=pin_range(inputs, downstream))
    walk = _walk(inputs) if upstream is not None else None
    if upstream is None:
        skipped["summary"] = "No upstream repository was given (--upstream): no summary."
    carried: frozenset[int] | None = None
    skipped_at: frozenset[int] = frozenset()
    if walk is not None and upstream is not None and downstream is not None and inputs.baseline is not None:
        # What the head carries, not what the walk found: mirrored at the head, not at the baseline.
        carried = _carried(inputs, walk, upstream, downstream)
        skipped_at = skipped_prs(downstream, inputs.baseline, inputs.head)

    check = run_check(inputs.check, progress=progress) if inputs.check and not inputs.engines else None

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
            upstream_base=walk.base if walk and explicit_range and walk.base != git.NULL_SHA else None,
        )
        path_map = inputs.path_map if inputs.path_map is not None else cfg.path_map
        audit = run_audit(
            downstream,
            inputs.baseline,
            inputs.head,
            upstream,
            tip,
            sync=inputs.sync or default_sync_name(base, git.resolve(upstream, tip)),
            upstream_base=base,
            path_map=path_map,
            excluded_globs=load_excluded_globs(inputs.policy or cfg.policy),
            transform=load_transform(cfg, path_map=path_map),
            verify=load_verify(cfg),
            upstream_pin=pin_relpath(cfg.upstream_pin.file, cfg.file, downstream),
        )

    own = _own_changes(cfg, downstream, inputs.baseline, inputs.head)
    report = _assemble(
        inputs, cfg, upstream, downstream, walk, check, audit, skipped, carried, skipped_at, progress
    )
    if downstream is not None and inputs.baseline is not None:
        report = replace(
            report,
            engines=tuple(_marked(e, cfg, downstream, inputs.baseline, inputs.head) for e in report.engines),
        )
    return replace(
        report,
        own=own,
        head=git.resolve(downstream, inputs.head) if downstream is not None else None,
    )


def _marked(
    table: EnginePatches | Skipped, cfg: Config, downstream: Path, baseline: str, head: str
) -> EnginePatches | Skipped:
    """An Engine patches table marked against the baseline's series (see report.seriesdiff)."""
    from vimesync.report.seriesdiff import mark_series

    if isinstance(table, Skipped) or table.series is None:
        return table
    rel = pin_relpath(Path(table.series), cfg.file, downstream)
    return table if rel is None else mark_series(table, downstream, baseline, head, rel)


def _own_changes(
    cfg: Config, downstream: Path | None, baseline: str | None, head: str
) -> OwnChanges | Skipped:
    """The commits of the sync branch that carry did not make (the pin bump is told by its pin)."""
    if downstream is None or baseline is None:
        return Skipped("No downstream baseline was given: the sync's own commits are unknown.")
    pin_path = pin_relpath(cfg.upstream_pin.file, cfg.file, downstream)
    try:
        return own_commits(downstream, baseline, head, pin_path=pin_path)
    except git.GitError as exc:
        return Skipped(f"The sync's own commits could not be read: {exc.message}")


def _assemble(
    inputs: ReportInputs,
    cfg: Config,
    upstream: Path | None,
    downstream: Path | None,
    walk: WalkResult | None,
    check: CheckReport | None,
    audit: AuditResult | None,
    skipped: dict[str, str],
    carried: frozenset[int] | None,
    skipped_at: frozenset[int],
    progress: ProgressFn | None,
) -> SyncReport:
    if inputs.engines:
        sections = [_engine_section(e, downstream, inputs, progress) for e in inputs.engines]
        return build_report(
            walk=walk,
            audit=audit,
            upstream_name=_upstream_name(cfg, upstream),
            upstream_repo=_upstream_repo(cfg, upstream),
            skipped=skipped,
            engines=sections,
            carried=carried,
            skipped_prs=skipped_at,
        )
    previous_pin = None
    if downstream is not None and inputs.baseline is not None:
        previous_pin = pinned_at(downstream, inputs.baseline, cfg.engine.file, "engine", "rev")
    series = None
    if check is None and inputs.series is not None:
        strip = cfg.engine.strip if inputs.strip is None else inputs.strip
        series = engine_from_series(inputs.series, strip=strip, config=cfg, previous_pin=previous_pin)
        skipped["validation"] = "No engine source was given (--source): the patch stack was not applied."

    return build_report(
        walk=walk,
        check=check,
        audit=audit,
        upstream_name=_upstream_name(cfg, upstream),
        upstream_repo=_upstream_repo(cfg, upstream),
        engine_repo=cfg.engine.repo,
        previous_engine_pin=previous_pin,
        series=series,
        skipped=skipped,
        carried=carried,
        skipped_prs=skipped_at,
        ci=ci_evidence(inputs.ci, downstream, inputs.head),
    )


def _upstream_repo(cfg: Config, upstream: Path | None) -> str | None:
    return cfg.upstream_repo or (_remote_repo(upstream) if upstream is not None else None)


def _upstream_name(cfg: Config, upstream: Path | None) -> str:
    repo = _upstream_repo(cfg, upstream)
    return cfg.upstream_name if cfg.file or not repo else repo.split("/")[1]


def _engine_section(
    e: EngineInput, downstream: Path | None, inputs: ReportInputs, progress: ProgressFn | None
) -> tuple[EnginePatches | Skipped, CheckReport | Skipped]:
    """One engine's Engine patches table and Validation line."""
    previous = None
    if downstream is not None and inputs.baseline is not None:
        previous = pinned_at(downstream, inputs.baseline, e.pin.file, "engine", "rev")
    if e.check is not None:
        check = run_check(e.check, progress=progress)
        return engine_of_check(check, e.pin.repo, previous), check
    if e.series is not None:
        strip = e.pin.strip if e.strip is None else e.strip
        table = engine_from_series(
            e.series, strip=strip, config=inputs.config, previous_pin=previous, pin=e.pin
        )
        return table, Skipped(
            f"No {e.pin.name} source was given (--source): the patch stack was not applied."
        )
    why = f"No {e.pin.name} source or series was given: "
    return Skipped(why + "no patch table."), Skipped(why + "the stack was not checked.")
