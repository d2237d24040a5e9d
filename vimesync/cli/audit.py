"""``vimesync audit``: classify every path a sync changed; ``vimesync audit review``: record reviews.

Exit codes: 0 every changed path is identical to upstream or reviewed at its head content,
1 some path is unreviewed or its review is stale, 2 bad input.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    BaselineOpt,
    ByOpt,
    ConfigOpt,
    DownstreamOpt,
    FormatOpt,
    HeadOpt,
    JsonOpt,
    JunitOpt,
    MapOpt,
    PolicyOpt,
    ReviewPathsArg,
    SyncOpt,
    UpstreamBaseOpt,
    UpstreamOpt,
    UpstreamTipOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.audit.model import AuditResult
    from vimesync.config import Config


def _downstream(cfg: Config, downstream: Path | None) -> Path:
    from vimesync.repopaths import repository_path

    return repository_path(downstream, cfg, "downstream_path") or Path.cwd()


def _upstream(cfg: Config, upstream: Path | None) -> Path:
    from vimesync.config import missing_input
    from vimesync.repopaths import repository_path

    path = repository_path(upstream, cfg, "upstream_path")
    if path is None:
        raise missing_input(
            cfg, "no upstream repository given", flag="--upstream PATH", key="[upstream] path"
        )
    return path


def _tip(cfg: Config, tip: str | None, upstream: Path) -> str:
    """--upstream-tip as given; else the config's branch, or the fetched tip ahead of it."""
    if tip is not None:
        return tip
    from vimesync.upstream.tip import configured_tip

    rev, note = configured_tip(upstream, cfg.upstream_branch or "HEAD")
    if note:
        output.stderr.print(output.styled(("note: ", "dim"), note))
    return rev


def _baseline(down: Path, baseline: str | None, head: str) -> str:
    """--baseline as given, else the one the downstream's branches tell (said on stderr)."""
    if baseline is not None:
        return baseline
    from vimesync.audit.syncname import determine_baseline

    sha, how = determine_baseline(down, head)
    output.stderr.print(output.styled(("note: ", "dim"), f"--baseline {sha[:12]}: {how}"))
    return sha


def _given(ctx: typer.Context) -> list[str]:
    """The options given on the command line (or by environment), as the user spelled them."""
    given = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given.append(param.opts[0])
    return given


def audit(
    ctx: typer.Context,
    downstream: DownstreamOpt = None,
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    upstream: UpstreamOpt = None,
    upstream_tip: UpstreamTipOpt = None,
    upstream_base: UpstreamBaseOpt = None,
    map_: MapOpt = None,
    policy: PolicyOpt = None,
    sync: SyncOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Classify every path changed between --baseline and --head: identical, translated, downstream-only,
    deleted, excluded; report unreviewed paths and stale reviews."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync import git
    from vimesync.audit.compare import default_sync_name, load_excluded_globs, run_audit
    from vimesync.audit.document import audit_json
    from vimesync.audit.syncname import upstream_base_of
    from vimesync.config import load_config, parse_map

    if ctx.invoked_subcommand is not None:
        # `vimesync audit --sync X review ...`: the check's options do not reach the subcommand;
        # refused rather than silently dropped.
        given = _given(ctx)
        if given:
            raise BadInput(
                f"{', '.join(given)} before {ctx.invoked_subcommand!r} would not apply to it",
                hint=f"put them after it: vimesync audit {ctx.invoked_subcommand} ... [OPTIONS]",
            )
        return EXIT_OK
    from vimesync.cli.cioutputs import CiOutputs

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    cfg = load_config(config)
    down, up = _downstream(cfg, downstream), _upstream(cfg, upstream)
    baseline = _baseline(down, baseline, head)
    tip = _tip(cfg, upstream_tip, up)
    base = upstream_base_of(
        cfg, upstream=up, tip=tip, downstream=down, baseline=baseline, upstream_base=upstream_base
    )
    result = run_audit(
        down,
        baseline,
        head,
        up,
        tip,
        sync=sync or default_sync_name(base, git.resolve(up, tip)),
        upstream_base=base,
        path_map=parse_map(map_) if map_ else cfg.path_map,
        excluded_globs=load_excluded_globs(policy or cfg.policy),
    )
    if json_out:
        output.emit_json(audit_json(result))
    else:
        with ci.human_output():
            render(result)
    from vimesync.outputs.findings import audit_findings

    ci.emit(audit_findings(result, upstream_name=cfg.upstream_name))
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


def render(result: AuditResult) -> None:
    from vimesync.audit.model import CLASSES, STALE

    counts = result.counts()
    per_class = ", ".join(f"{counts[c]:,} {c}" for c in CLASSES if counts[c]) or "nothing changed"
    output.out(
        f"{plural(len(result.paths), 'changed path')} {result.baseline[:8]}..{result.head[:8]} "
        f"against upstream {result.upstream_tip[:8]}: {per_class}"
    )
    # Paths, names and the sync come from the repository: shown as text, one line each.
    output.stdout.print(output.styled(f"ledger: {result.ledger_path} (sync {result.sync})"))
    for p in result.paths:
        if p.ok:
            continue
        extra = (
            f" (reviewed by {p.reviewed_by} at {(p.reviewed_oid or '')[:8]}, changed since)"
            if p.review == STALE
            else ""
        )
        output.stdout.print(output.styled(f"  {p.review:<10} {p.cls:<15} {p.path}{extra}"))
    if not result.paths:
        output.warn(
            f"no path changed between the baseline and the head ({result.baseline[:12]}): nothing was "
            "audited; is --baseline the commit before the sync?"
        )
    elif result.ok:
        output.out("OK: every changed path is identical to upstream or reviewed at its head content.")
    else:
        n = len(result.unreviewed) + len(result.stale)
        need = "needs" if n == 1 else "need"
        output.out(f"FAILED: {plural(n, 'path')} {need} review: vimesync audit review PATH... --by NAME")


def review(
    paths: ReviewPathsArg,
    by: ByOpt,
    sync: SyncOpt = None,
    downstream: DownstreamOpt = None,
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    upstream: UpstreamOpt = None,
    upstream_tip: UpstreamTipOpt = None,
    upstream_base: UpstreamBaseOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record that NAME reviewed PATH... at their content in --head, in sop/reviews/<sync>.toml."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.audit.compare import reviews_for
    from vimesync.audit.ledger import ledger_relpath, read_ledger, record, write_ledger
    from vimesync.audit.syncname import sync_name
    from vimesync.config import load_config

    json_out = output_format(fmt, json_) == "json"
    if sync is not None:
        # They only name the ledger: with --sync naming it, they would have nothing to do.
        unused = [
            flag
            for flag, value in (
                ("--upstream", upstream),
                ("--upstream-tip", upstream_tip),
                ("--upstream-base", upstream_base),
            )
            if value is not None
        ]
        if unused:
            raise BadInput(
                f"{', '.join(unused)} only {'names' if len(unused) == 1 else 'name'} the ledger,"
                " which --sync already names",
                hint="give either --sync NAME or the upstream options",
            )
    cfg = load_config(config)
    down = _downstream(cfg, downstream)
    # Without a baseline every file at HEAD would count as reviewed: only the sync's changes may.
    baseline = _baseline(down, baseline, head)
    if sync is None:
        up = _upstream(cfg, upstream)
        sync = sync_name(
            cfg,
            upstream=up,
            tip=_tip(cfg, upstream_tip, up),
            downstream=down,
            baseline=baseline,
            upstream_base=upstream_base,
        )
    at = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    reviews = reviews_for(down, paths, by=by, at=at, head=head, baseline=baseline)
    ledger_file = down / ledger_relpath(sync)
    write_ledger(ledger_file, record(read_ledger(ledger_file, sync), reviews))
    if json_out:
        doc: dict[str, Any] = {
            "sync": sync,
            "ledger": ledger_relpath(sync),
            "reviews": [r.__dict__ for r in reviews],
        }
        output.emit_json(doc)
    else:
        output.stdout.print(
            output.styled(f"recorded {plural(len(reviews), 'review')} by {by} in {ledger_relpath(sync)}")
        )
    return EXIT_OK
