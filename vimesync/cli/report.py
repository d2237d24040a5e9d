"""``vimesync report``: the sync PR description, every figure computed.

Runs the upstream walk, the patch-stack check and the changed-path audit (each only when its
inputs are given: flags win over vimesync.toml and the pins), then renders markdown or JSON to
stdout or ``--output``, and with ``--publish owner/repo#N`` puts it into that PR's description.

Exit codes: 0 the report was generated and every check that ran passed; 1 the report was
generated (and written/published) but a check failed: a patch does not apply, a patched Python
file does not parse, or a changed path is unreviewed or its review is stale; 2 bad input.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    BaselineOpt,
    ConfigOpt,
    DocFormatOpt,
    DownstreamOpt,
    GithubOpt,
    HeadOpt,
    JsonOpt,
    MapOpt,
    OutputOpt,
    PolicyOpt,
    PrMetadataOpt,
    PublishOpt,
    RangeOpt,
    RevOpt,
    SeriesOpt,
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


def _check_opts(
    cfg: Config, source: Path | None, rev: str | None, series: Path | None, strip: int | None
) -> CheckOptions | None:
    from vimesync.check.model import check_options

    if (source or cfg.engine.source) is None or (series or cfg.engine.series) is None:
        return None
    return check_options(cfg, source=source, rev=rev, series=series, strip=strip)


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
    source: SourceOpt = None,
    rev: RevOpt = None,
    series: SeriesOpt = None,
    strip: StripOpt = None,
    pr_metadata: PrMetadataOpt = None,
    github: GithubOpt = False,
    fmt: DocFormatOpt = None,
    json_: JsonOpt = False,
    out_file: OutputOpt = None,
    publish: PublishOpt = None,
    config: ConfigOpt = None,
) -> int:
    """Write the sync PR description: summary, engine patches, final audit, validation."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.cli.progress import parse_progress
    from vimesync.config import load_config, parse_map
    from vimesync.github import is_repo_name
    from vimesync.report.document import render_json
    from vimesync.report.generate import ReportInputs, generate_report
    from vimesync.report.markdown import render_markdown
    from vimesync.safefs import check_output_path, write_atomic

    as_json = output_format(fmt, json_) == "json"
    if publish is not None:
        from vimesync.report.publish import parse_target, require_token

        parse_target(publish)  # fail on a bad target before any work
        require_token()
    if out_file is not None:
        # Before any work: a symlink there (or on a folder inside the checkout) is refused.
        check_output_path(out_file, what="--output")
    cfg = load_config(config)
    if upstream_repo is not None:
        if not is_repo_name(upstream_repo):
            raise BadInput(f"--upstream-repo {upstream_repo!r}: expected owner/name, e.g. THUDM/slime")
        cfg = replace(cfg, upstream_repo=upstream_repo)
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
        check=(opts := _check_opts(cfg, source, rev, series, strip)),
        series=(series or cfg.engine.series) if opts is None else None,
        strip=strip,
        pr_metadata=pr_metadata,
        github=github,
    )
    with parse_progress(enabled=output.progress_enabled()) as progress:
        result = generate_report(inputs, progress=progress)
    markdown = render_markdown(result)
    text = json.dumps(render_json(result), indent=2) + "\n" if as_json else markdown
    if out_file is not None:
        write_atomic(out_file, text.encode("utf-8"), what="--output")
        output.stderr.print(output.styled(f"wrote {out_file}"))
    elif as_json:
        output.emit_json(render_json(result))
    else:
        output.stdout.file.write(text)
        output.stdout.file.flush()
    if publish is not None:
        from vimesync.report.publish import publish as do_publish

        done = do_publish(publish, markdown)
        verb = "updated" if done.changed else "already up to date:"
        output.stderr.print(output.styled(f"{verb} {done.url or done.target}"))
    return EXIT_OK if result.checks_ok else EXIT_CHECK_FAILED
