"""``vimesync sop``: the sync procedure (sop/SYNC.md) as gates — ``status`` evaluates them in
order, ``record image`` records the container-image evidence of the sync head."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    ArchOpt,
    BaselineOpt,
    CiPrOpt,
    CiRepoOpt,
    ConfigOpt,
    DigestOpt,
    FormatOpt,
    HeadOpt,
    ImageRefOpt,
    JsonOpt,
    RequireOpt,
    ShaOpt,
    SkipGateOpt,
    SourceOpt,
    SyncOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput

if TYPE_CHECKING:
    from vimesync.config import Config


def _downstream(cfg: Config) -> Path:
    from vimesync.repopaths import repository_path

    return repository_path(None, cfg, "downstream_path") or Path.cwd()


def _sync_name(cfg: Config, sync: str | None, downstream: Path, baseline: str | None) -> str:
    from vimesync.repopaths import repository_path

    if sync:
        return sync
    upstream = repository_path(None, cfg, "upstream_path")
    if upstream is None:
        raise BadInput("no sync name: pass --sync NAME (or set [upstream] path to derive it)")
    from vimesync.audit.syncname import determine_baseline, sync_name

    if baseline is None:
        # As audit and report do: on a sync branch, the baseline is where it left main, so a
        # record and the status name the same sync before and after the pin bump.
        try:
            baseline = determine_baseline(downstream, "HEAD")[0]
        except BadInput:
            baseline = None
    return sync_name(
        cfg, upstream=upstream, tip=cfg.upstream_branch or "HEAD", downstream=downstream, baseline=baseline
    )


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
    source: SourceOpt = None,
    ci_repo: CiRepoOpt = None,
    ci_pr: CiPrOpt = None,
    require: RequireOpt = None,
    skip_gate: SkipGateOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Evaluate the sync's gates in order — classified, carried, patches, audit, ci, images — and
    print a checklist with the command that moves each unmet gate. Exit 0 when all hold."""
    from vimesync import git
    from vimesync.cli.report import _check_opts, _ci_request, _engine_inputs
    from vimesync.config import load_config
    from vimesync.repopaths import repository_path
    from vimesync.report.checklist import evaluate, status_to_dict
    from vimesync.report.generate import ReportInputs, generate_report
    from vimesync.report.model import Skipped
    from vimesync.sop.gatesfile import gates_of, ignored_off, skip_flags, sop_root
    from vimesync.sop.records import load_images
    from vimesync.upstream.model import WalkResult

    json_out = output_format(fmt, json_) == "json"
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
        # Every engine the config names: one patches gate each (as the report checks them).
        check=None if len(cfg.engines) > 1 else _check_opts(cfg, source, None, None, None, False),
        engines=_engine_inputs(cfg, None, {"source": source}) if len(cfg.engines) > 1 else (),
        ci=_ci_request(cfg, ci_repo, ci_pr, None, required),
    )
    report = replace(generate_report(inputs), gates_off=off)
    upstream = repository_path(None, cfg, "upstream_path")
    walk_at_head: WalkResult | Skipped
    if upstream is not None:
        from vimesync.report.model import Summary
        from vimesync.upstream.pipeline import walk_and_classify

        # The range the report walked (a pin bumped by the sync would make the default empty).
        walked = (
            f"{report.summary.base}..{report.summary.tip}" if isinstance(report.summary, Summary) else None
        )
        walk_at_head = walk_and_classify(
            upstream, walked, policy=None, downstream=downstream, config=cfg, downstream_rev=head_sha
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


def record_image(
    arch: ArchOpt,
    digest: DigestOpt,
    ref: ImageRefOpt = None,
    sha: ShaOpt = None,
    head: HeadOpt = "HEAD",
    baseline: BaselineOpt = None,
    sync: SyncOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Record a container image built from the sync head in sop/records/<sync>.toml."""
    from vimesync import git
    from vimesync.config import load_config
    from vimesync.sop.gatesfile import gates_of, sop_root
    from vimesync.sop.records import ImageRecord, check_image, load_images
    from vimesync.sop.records import record_image as write_record

    json_out = output_format(fmt, json_) == "json"
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
