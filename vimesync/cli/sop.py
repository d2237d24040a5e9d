"""``vimesync sop``: the sync procedure (sop/SYNC.md) as gates — ``status`` evaluates them in
order, ``record image`` records the container-image evidence of the sync head."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from vimesync import git
from vimesync.cli import output
from vimesync.cli.app import app
from vimesync.config import Config, load_config
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput
from vimesync.repopaths import repository_path

sop_app = typer.Typer(help="The sync procedure as checkable gates.", no_args_is_help=True)
app.add_typer(sop_app, name="sop")

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default: ./vimesync.toml if present).")
]
BaselineOpt = Annotated[str | None, typer.Option("--baseline", help="The pre-sync downstream commit.")]
HeadOpt = Annotated[str, typer.Option("--head", help="The sync head.")]
SyncOpt = Annotated[
    str | None, typer.Option("--sync", help="The sync's name (default: <upstream base8>..<tip8>).")
]


def _downstream(cfg: Config) -> Path:
    return repository_path(None, cfg, "downstream_path") or Path.cwd()


def _sync_name(cfg: Config, sync: str | None, downstream: Path, baseline: str | None) -> str:
    if sync:
        return sync
    upstream = repository_path(None, cfg, "upstream_path")
    if upstream is None:
        raise BadInput("no sync name: pass --sync NAME (or set [upstream] path to derive it)")
    from vimesync.audit.syncname import sync_name

    return sync_name(
        cfg, upstream=upstream, tip=cfg.upstream_branch or "HEAD", downstream=downstream, baseline=baseline
    )


_MARK = {
    "held": ("✓", "bold green"),
    "failed": ("✗", "bold red"),
    "not checked": ("not run", "yellow"),
    "off": ("off", "dim"),
}


@sop_app.command("status")
def status(
    baseline: BaselineOpt = None,
    head: HeadOpt = "HEAD",
    sync: SyncOpt = None,
    source: Annotated[Path | None, typer.Option(help="Engine source (default: the engine pin).")] = None,
    ci_repo: Annotated[
        str | None, typer.Option(help="owner/name where CI reports (default: [ci] repo).")
    ] = None,
    pr: Annotated[
        int | None, typer.Option("--pr", min=1, help="The sync PR (its head must be --head).")
    ] = None,
    require: Annotated[
        list[str] | None, typer.Option("--require", help="A required CI context, repeatable.")
    ] = None,
    skip_gate: Annotated[
        list[str] | None, typer.Option("--skip-gate", help="Switch a gate off, repeatable.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")] = False,
    config: ConfigOpt = None,
) -> int:
    """Evaluate the sync's gates in order — classified, carried, patches, audit, ci, images — and
    print a checklist with the command that moves each unmet gate. Exit 0 when all hold."""
    from vimesync.cli.report import _check_opts, _ci_request
    from vimesync.report.checklist import evaluate, status_to_dict
    from vimesync.report.generate import ReportInputs, generate_report
    from vimesync.report.model import Skipped
    from vimesync.sop.gatesfile import gates_of, ignored_off, skip_flags, sop_root
    from vimesync.sop.records import load_images
    from vimesync.upstream.model import WalkResult

    cfg = load_config(config)
    gates_cfg = gates_of(cfg)
    off = skip_flags(skip_gate, gates_cfg)
    for name in ignored_off(gates_cfg):
        output.warn(
            f"sop/gates.toml switches {name} off, not honoured in an untrusted checkout:"
            f" pass --skip-gate {name}"
        )
    required = tuple(require or ()) or cfg.ci_required or gates_cfg.required
    downstream = _downstream(cfg)
    head_sha = git.resolve(downstream, head)
    inputs = ReportInputs(
        config=cfg,
        baseline=baseline,
        head=head_sha,
        sync=sync,
        check=_check_opts(cfg, source, None, None, None),
        ci=_ci_request(cfg, ci_repo, pr, None, required),
    )
    report = replace(generate_report(inputs), gates_off=off)
    upstream = repository_path(None, cfg, "upstream_path")
    walk_at_head: WalkResult | Skipped
    if upstream is not None:
        from vimesync.upstream.pipeline import walk_and_classify

        walk_at_head = walk_and_classify(
            upstream, None, policy=None, downstream=downstream, config=cfg, downstream_rev=head_sha
        )
    else:
        walk_at_head = Skipped("No upstream repository was given ([upstream] path): not checked.")
    from vimesync.audit.model import AuditResult

    name = (
        report.audit.sync
        if isinstance(report.audit, AuditResult)
        else _sync_name(cfg, sync, downstream, baseline)
    )
    records = load_images(sop_root(cfg), name)
    result = evaluate(
        report,
        sync=name,
        head=head_sha,
        walk_at_head=walk_at_head,
        records=records,
        architectures=gates_cfg.architectures,
        off=off,
    )
    if json_out:
        output.emit_json(status_to_dict(result))
    else:
        con = output.stdout
        con.print(output.styled(("Sync ", "bold"), (name, "bold"), f" at head {head_sha[:8]}"))
        for g in result.gates:
            mark, style = _MARK[g.state]
            con.print(output.styled((f"{mark:>7} ", style), (f"{g.name:<10}", "bold"), " ", g.detail))
            if g.command:
                con.print(output.styled(" " * 19, ("→ ", "dim"), (g.command, "cyan")))
        verdict = "all gates hold" if result.ok else f"{sum(not g.ok for g in result.gates)} gates not met"
        con.print(
            output.styled(
                ("OK" if result.ok else "NOT READY", "bold green" if result.ok else "bold red"),
                f": {verdict}.",
            )
        )
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


record_app = typer.Typer(help="Record evidence for the sync head.", no_args_is_help=True)
sop_app.add_typer(record_app, name="record")


@record_app.command("image")
def record_image(
    arch: Annotated[str, typer.Option("--arch", help="amd64 or arm64 (sop/gates.toml [images]).")],
    digest: Annotated[str, typer.Option("--digest", help="The image manifest digest, sha256:<64 hex>.")],
    ref: Annotated[str | None, typer.Option("--ref", help="The image reference (registry/name:tag).")] = None,
    sha: Annotated[
        str | None, typer.Option("--sha", help="The commit built (must be the sync head).")
    ] = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
    config: ConfigOpt = None,
) -> int:
    """Record a container image built from the sync head in sop/records/<sync>.toml."""
    from vimesync.sop.gatesfile import gates_of, sop_root
    from vimesync.sop.records import ImageRecord, check_image, load_images
    from vimesync.sop.records import record_image as write_record

    cfg = load_config(config)
    gates_cfg = gates_of(cfg)
    downstream = _downstream(cfg)
    head_sha = git.resolve(downstream, head)
    name = _sync_name(cfg, sync, downstream, baseline)
    root = sop_root(cfg)
    existing = load_images(root, name)
    built = sha if sha is not None else head_sha
    check_image(arch, digest, built, head_sha, ref, architectures=gates_cfg.architectures, existing=existing)
    path = write_record(root, name, ImageRecord(arch=arch, digest=digest, sha=head_sha, ref=ref or ""))
    if json_out:
        output.emit_json(
            {"ok": True, "sync": name, "arch": arch, "digest": digest, "sha": head_sha, "file": str(path)}
        )
    else:
        output.out(f"recorded {arch} image {digest} at {head_sha[:8]} in {path}")
    return EXIT_OK
