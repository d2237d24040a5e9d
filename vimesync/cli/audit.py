"""``vimesync audit``: classify every path a sync changed; ``vimesync audit review``: record reviews.

Exit codes: 0 every changed path is identical to upstream or reviewed at its head content,
1 some path is unreviewed or its review is stale, 2 bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from vimesync.errors import EXIT_OK, BadInput
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.audit.model import AuditResult


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
    from vimesync.app.audit import audit_sync
    from vimesync.app.context import SyncRequest

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
    from vimesync.outputs.findings import audit_findings

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    request = SyncRequest(
        config=config, downstream=downstream, upstream=upstream, upstream_tip=upstream_tip,
        upstream_base=upstream_base, baseline=baseline, head=head, sync=sync,
        path_map=tuple(map_) if map_ else None, policy=policy,
    )  # fmt: skip
    outcome = audit_sync(request)
    for note in outcome.notes:
        output.stderr.print(output.styled(("note: ", "dim"), note))
    if json_out:
        output.emit_json(outcome.to_json())
    else:
        with ci.human_output():
            render(outcome.audit)
    ci.emit(audit_findings(outcome.audit, upstream_name=outcome.audit_upstream_name))
    return outcome.exit_code


def render(result: AuditResult) -> None:
    from vimesync.audit.model import CLASSES, OVERLAY, STALE

    counts = result.counts()
    per_class = ", ".join(f"{counts[c]:,} {c}" for c in CLASSES if counts[c]) or "nothing changed"
    output.out(
        f"{plural(len(result.paths), 'changed path')} {result.baseline[:8]}..{result.head[:8]} "
        f"against upstream {result.upstream_tip[:8]}: {per_class}"
    )
    # Paths, names and the sync come from the repository: shown as text, one line each.
    output.stdout.print(output.styled(f"ledger: {result.ledger_path} (sync {result.sync})"))
    for p in result.paths:
        if p.ok and p.cls != OVERLAY:
            continue
        extra = f" (+{p.residue_added}/-{p.residue_removed} lines of residue)" if p.cls == OVERLAY else ""
        if p.review == STALE:
            extra += f" (reviewed by {p.reviewed_by} at {(p.reviewed_oid or '')[:8]}, changed since)"
        elif p.reviewed_in:
            extra += f" (reviewed by {p.reviewed_by} in sync {p.reviewed_in}, residue unchanged)"
        output.stdout.print(output.styled(f"  {p.review:<10} {p.cls:<19} {p.path}{extra}"))
        for line in p.dropped_comments:
            output.stdout.print(output.styled(f"    dropped upstream comment {line}"))
    for v in result.violations:
        what = f"no match of {v.pattern}" if v.must == "match" else f"{v.text}  ({v.pattern} must not match)"
        output.stdout.print(output.styled(f"  violation  {v.path}:{v.line}: {what} [{v.where}]"))
    if not result.paths:
        output.warn(
            f"no path changed between the baseline and the head ({result.baseline[:12]}): nothing was "
            "audited; is --baseline the commit before the sync?"
        )
    elif result.ok:
        output.out(
            "OK: every changed path is identical to upstream, explained by the translations, or reviewed."
        )
    else:
        n = len(result.unreviewed) + len(result.stale)
        need = "needs" if n == 1 else "need"
        if n:
            output.out(f"FAILED: {plural(n, 'path')} {need} review: vimesync audit review PATH... --by NAME")
        if result.violations:
            output.out(
                f"FAILED: {plural(len(result.violations), 'verification finding')} ([[upstream.verify]])"
            )


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
    from vimesync.app.audit import ReviewRequest, review_paths
    from vimesync.app.context import SyncRequest

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
    request = SyncRequest(
        config=config, downstream=downstream, upstream=upstream, upstream_tip=upstream_tip,
        upstream_base=upstream_base, baseline=baseline, head=head, sync=sync,
    )  # fmt: skip
    result = review_paths(ReviewRequest(paths=tuple(paths), by=by, sync=request))
    for note in result.notes:
        output.stderr.print(output.styled(("note: ", "dim"), note))
    if json_out:
        output.emit_json(result.to_json())
    else:
        n = plural(len(result.reviews), "review")
        output.stdout.print(output.styled(f"recorded {n} by {by} in {result.ledger}"))
    return EXIT_OK
