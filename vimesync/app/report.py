"""``vimesync report`` as a use case: the sync PR description of one head, every figure computed.

The head is a commit: its series, patches, pins, policy and gates are read from it (see
:mod:`vimesync.app.headtree`), whatever the working tree holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vimesync.app.context import SyncContext, SyncRequest, load, resolve
from vimesync.app.engines import EngineFlags, engine_inputs, several, single_check
from vimesync.app.headtree import HeadTree, head_config
from vimesync.app.result import Kind, document
from vimesync.check.model import ProgressFn
from vimesync.config import Config
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, VimesyncError
from vimesync.report.generate import CiRequest, ReportInputs, generate_report
from vimesync.report.model import SyncReport
from vimesync.sop.gatesfile import GatesConfig, gates_of, ignored_off, skip_flags, sop_root


@dataclass(frozen=True)
class CiFlags:
    repo: str | None = None
    pr: int | None = None
    require: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportRequest:
    sync: SyncRequest = field(default_factory=SyncRequest)
    engines: EngineFlags = field(default_factory=EngineFlags)
    ci: CiFlags = field(default_factory=CiFlags)
    pr_metadata: Path | None = None
    github: bool = False
    skip_gate: tuple[str, ...] = ()
    publish: str | None = None  # owner/repo#N: whose head the report must be (CI) and where it goes


@dataclass(frozen=True)
class ReportResult:
    report: SyncReport
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.REPORT

    @property
    def ok(self) -> bool:
        return self.report.gates_ok

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_CHECK_FAILED

    def to_json(self) -> dict[str, Any]:
        from vimesync.report.document import render_json

        return document(self.kind, self.exit_code, render_json(self.report))


def gate_notes(gates_cfg: GatesConfig) -> tuple[str, ...]:
    return tuple(
        f"sop/gates.toml switches {name} off, not honoured in an untrusted checkout: pass --skip-gate {name}"
        for name in ignored_off(gates_cfg)
    )


def ci_request(
    cfg: Config, flags: CiFlags, publish: str | None, required: tuple[str, ...]
) -> CiRequest | None:
    """Where to read the head's CI: --ci-repo, else the --publish target's repo (whose PR is then
    the one whose head the report must be), else [ci] repo (see ``choose_repo``); None when none."""
    from vimesync.ci.evidence import choose_repo
    from vimesync.settings import Settings

    settings = Settings.capture()  # workspace: passed down once the workspace lands
    repo, pr = flags.repo, flags.pr
    if publish is not None and (repo is None or pr is None):
        from vimesync.report.publish import parse_target

        target_repo, number = parse_target(publish)
        repo, pr = repo or target_repo, pr or number
    job, untrusted = settings.job_repository, settings.untrusted
    repo = choose_repo(repo, cfg.ci_repo, job=job, untrusted=untrusted, what="--ci-repo")
    if repo is None:
        return None
    return CiRequest(repo=repo, github=settings.github, pr=pr, required=required)


@contextmanager
def at_head(ctx: SyncContext) -> Iterator[tuple[Config, tuple[str, ...], HeadTree | None]]:
    """The config the head commit holds (the checkout's without a downstream), and its notes.
    An error about one of the head's files names it where the checkout has it."""
    if ctx.downstream is None or ctx.head is None:
        yield ctx.config, (), None
        return
    with head_config(ctx.config, ctx.downstream, ctx.head) as (cfg, note, tree):
        if ctx.request.upstream_repo is not None:
            cfg = replace(cfg, upstream_repo=ctx.request.upstream_repo)
        try:
            yield cfg, (note,) if note else (), tree
        except VimesyncError as exc:
            raise _in_checkout(exc, tree) from None


def _refuse_nothing(ctx: SyncContext, request: ReportRequest) -> None:
    """A report of nothing at all (no config, no repository, no engine given) is bad input, exit 2
    as every other command says it, not a report whose every gate reads "not checked"."""
    from vimesync.config import missing_input

    e = request.engines
    given = (ctx.upstream, ctx.downstream, e.source, e.series, ctx.config.engine.source)
    if ctx.config.file is None and all(v is None for v in given) and ctx.config.engine.package is None:
        raise missing_input(ctx.config, "nothing to report on", flag="--upstream PATH", key="[upstream] path")


def _named_in_checkout(report: SyncReport, tree: HeadTree, root: Path | None = None) -> SyncReport:
    """The head's series files named where the checkout has them, not in the scratch copy."""
    from vimesync.check.model import CheckReport
    from vimesync.report.model import EnginePatches

    def fix(item: Any) -> Any:
        if isinstance(item, CheckReport):
            return replace(item, series=tree.in_checkout(item.series))
        if isinstance(item, EnginePatches):
            return replace(item, source=tree.in_checkout(item.source))
        return item

    return replace(
        report,
        engines=tuple(fix(e) for e in report.engines),
        validations=tuple(fix(v) for v in report.validations),
        audit=audit_in_checkout(report.audit, tree, root),
    )


def audit_in_checkout(audit: Any, tree: HeadTree | None, root: Path | None = None) -> Any:
    """The head's config named where the checkout has it in an audit's translations and
    verification findings (they name the config's file and line), relative to ``root`` (the
    downstream) when inside it: ``vimesync.toml:9``, as a PR description should say it."""
    from vimesync.audit.model import AuditResult

    if not isinstance(audit, AuditResult):
        return audit
    prefix = f"{root}/" if root is not None else None

    def named(text: str) -> str:
        text = tree.in_checkout(text) if tree is not None else text
        return text[len(prefix) :] if prefix and text.startswith(prefix) else text

    paths = tuple(replace(p, rules=tuple(named(r) for r in p.rules)) if p.rules else p for p in audit.paths)
    violations = tuple(replace(v, where=named(v.where)) for v in audit.violations)
    return replace(audit, paths=paths, violations=violations)


def _in_checkout(exc: VimesyncError, tree: HeadTree | None) -> VimesyncError:
    if tree is not None:
        exc.message = tree.in_checkout(exc.message)
        exc.args = (exc.message,)
    return exc


def build_inputs(
    ctx: SyncContext, head_cfg: Config, request: ReportRequest, ci: CiRequest | None
) -> ReportInputs:
    """What :func:`generate_report` needs, every location and revision already resolved."""
    flags = request.engines
    many = several(head_cfg, flags)
    opts = None if many else single_check(head_cfg, flags)
    req = ctx.request
    github = None
    if request.github:
        from vimesync.settings import Settings

        github = Settings.capture().github  # workspace: passed down once the workspace lands
    return ReportInputs(
        config=head_cfg,
        upstream=ctx.upstream,
        range_=req.range_,
        policy=req.policy,
        downstream=ctx.downstream,
        baseline=ctx.baseline,
        head=ctx.head or req.head,
        path_map=ctx.path_map if req.path_map else None,
        sync=req.sync,
        check=opts,
        series=(flags.series or head_cfg.engine.series) if opts is None else None,
        strip=flags.strip,
        pr_metadata=request.pr_metadata,
        github=github,
        engines=engine_inputs(head_cfg, flags) if many else (),
        ci=ci,
    )


def make_report(request: ReportRequest, *, progress: ProgressFn | None = None) -> ReportResult:
    """Walk, check and audit the sync at its head and build the report (nothing published)."""
    checkout = load(request.sync)
    ctx = resolve(request.sync, config=checkout, downstream_default="none")
    _refuse_nothing(ctx, request)
    with at_head(ctx) as (head_cfg, notes, tree):
        gates_cfg = gates_of(checkout)
        off = skip_flags(list(request.skip_gate) or None, gates_cfg)
        required = request.ci.require or head_cfg.ci_required or gates_cfg.required
        ci = ci_request(head_cfg, request.ci, request.publish, required)
        report = generate_report(build_inputs(ctx, head_cfg, request, ci), progress=progress)
        if tree is not None:
            report = _named_in_checkout(report, tree, ctx.downstream)
        report = replace(report, gates_off=off)
        report = replace(report, images=images_of(ctx, checkout, report, gates_cfg))
        report = replace(report, evidence=recorded_evidence(ctx, checkout, report))
        report = replace(report, tests_required=gates_cfg.evidence)
    return ReportResult(report=report, notes=gate_notes(gates_cfg) + notes)


def images_of(ctx: SyncContext, checkout: Config, report: SyncReport, gates_cfg: GatesConfig) -> Any:
    """The image records of this sync for its head's evidence head (only with an audit: it names
    sync and head)."""
    from vimesync.app.evidence import heads
    from vimesync.audit.model import AuditResult
    from vimesync.sop.promotions import image_evidence

    if not isinstance(report.audit, AuditResult) or checkout.file is None:
        return None
    bound = heads(ctx, checkout)[1] if ctx.head == report.audit.head else report.audit.head
    return image_evidence(
        sop_root(checkout), report.audit.sync, bound, gates_cfg.architectures, gates_cfg.promote
    )


def recorded_evidence(ctx: SyncContext, checkout: Config, report: SyncReport) -> Any:
    """The tests and runs recorded for this sync, read for its head (None without a head, a
    vimesync.toml or a sync name)."""
    from vimesync.app.evidence import evidence_of
    from vimesync.audit.model import AuditResult
    from vimesync.errors import BadInput

    if ctx.head is None or checkout.file is None:
        return None
    if isinstance(report.audit, AuditResult):
        name = report.audit.sync
    else:
        try:
            name = ctx.sync_name()
        except BadInput:
            return None
    return evidence_of(ctx, checkout, name)


def refuse_early(publish: str | None, out_file: Path | None) -> None:
    """Before any work: a bad --publish target, no token for it, or an --output that cannot be
    written (a symlink there, or on a folder inside the checkout) is refused."""
    from vimesync.safefs import check_output_path

    if publish is not None:
        from vimesync.report.publish import parse_target, require_token
        from vimesync.settings import Settings

        parse_target(publish)
        require_token(Settings.capture().github)  # workspace: passed down once the workspace lands
    if out_file is not None:
        check_output_path(out_file, what="--output")


def publish_report(target: str, result: ReportResult) -> Any:
    """Put the report into the PR description of ``target`` (between its markers)."""
    from vimesync.report.markdown import render_markdown
    from vimesync.report.publish import publish
    from vimesync.settings import Settings

    github = Settings.capture().github  # workspace: passed down once the workspace lands
    return publish(target, render_markdown(result.report), github)


def write_output(path: Path, text: str) -> None:
    """The report (Markdown or JSON) written to ``--output``, atomically, never through a symlink."""
    from vimesync.safefs import write_atomic

    write_atomic(path, text.encode("utf-8"), what="--output")
