"""``vimesync walk``: classify the upstream PRs of a range (table or one JSON document)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vimesync.cli import output
from vimesync.cli.options import (
    ConfigOpt,
    DownstreamOpt,
    DownstreamRevOpt,
    FormatOpt,
    GithubOpt,
    JsonOpt,
    PolicyOpt,
    PrMetadataOpt,
    RangeOpt,
    UpstreamOpt,
    output_format,
)
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.upstream.model import Decision, PullRequest, WalkResult

# The upstream model (and its dataclasses) is imported where a result is shown, not at import:
# ``vimesync --help`` imports every command module.


def result_json(result: WalkResult) -> dict[str, Any]:
    """The ``--json`` document: range, PRs in merge order (oldest first), direct commits, totals."""
    from vimesync.upstream.model import APPLICABLE

    def pr_doc(pr: PullRequest) -> dict[str, Any]:
        d = pr.decision
        return {
            "number": pr.number,
            "title": pr.title,
            "kind": pr.kind,
            "merge_commit": pr.merge_commit,
            "commits": list(pr.commits),
            "paths": list(pr.paths),
            "labels": list(pr.labels),
            "author": pr.author,
            "reverts": pr.reverts,
            "status": d.status if d else APPLICABLE,
            "reason": decision_reason(d),
            "rule": d.rule if d else None,
            "partial_paths": list(d.partial_paths) if d else [],
            "mirrored_by": d.mirrored_by if d else None,
        }

    return {
        "upstream": result.upstream,
        "range": {"base": result.base, "tip": result.tip},
        "prs": [pr_doc(pr) for pr in result.prs],
        "direct_commits": [
            {"sha": c.sha, "title": c.title, "paths": list(c.paths), "reverts": c.reverts}
            for c in result.direct_commits
        ],
        "totals": _totals(result),
        "notes": list(result.notes),
    }


def _partly_excluded(paths: tuple[str, ...], limit: int | None = None) -> str:
    shown = paths[:limit] if limit is not None else paths
    return f"partly in excluded paths: {', '.join(shown)}" + (" …" if len(shown) < len(paths) else "")


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def decision_reason(d: Decision | None) -> str:
    """Why a PR has its status, in words: the policy's reason, then the excluded paths it partly
    touches. The ``--json`` reason; the table says the same (with the rule, at most 3 paths)."""
    if d is None:
        return ""
    return _joined(d.reason, _partly_excluded(d.partial_paths) if d.partial_paths else "")


def _totals(result: WalkResult) -> dict[str, int]:
    from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED

    counts = {APPLICABLE: 0, EXCLUDED: 0, MIRRORED: 0}
    for pr in result.prs:
        counts[pr.decision.status if pr.decision else APPLICABLE] += 1
    return {"prs": len(result.prs), **counts, "direct_commits": len(result.direct_commits)}


def _render(result: WalkResult) -> None:
    from rich.table import Table

    from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED

    style = {APPLICABLE: "green", EXCLUDED: "red", MIRRORED: "cyan"}

    # Titles, reasons and the upstream name come from commits and config: output.styled shows them
    # as text (never rich markup, control characters escaped).
    table = Table(
        title=output.styled(f"{result.upstream} {result.base[:12]}..{result.tip[:12]}"), title_justify="left"
    )
    table.add_column("PR", justify="right", no_wrap=True)
    table.add_column("title", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("reason", overflow="fold")
    for pr in result.prs:
        d = pr.decision
        status = d.status if d else APPLICABLE
        reason = d.reason if d else ""
        if d and d.rule:
            reason = f"{reason} (rule {d.rule})"
        if d and d.partial_paths:
            reason = _joined(reason, _partly_excluded(d.partial_paths, 3))
        if pr.reverts:
            reason = _joined(reason, f"reverts #{pr.reverts}")
        table.add_row(
            f"#{pr.number}",
            output.styled(pr.title),
            output.styled((status, style[status])),
            output.styled(reason),
        )
    output.stdout.print(table)
    if result.direct_commits:
        output.out(f"direct commits (no PR): {len(result.direct_commits):,}")
        for c in result.direct_commits:
            extra = f"  (reverts #{c.reverts})" if c.reverts else ""
            output.stdout.print(output.styled(f"  {c.sha[:12]} {c.title}{extra}"))
    t = _totals(result)
    output.out(
        f"{plural(t['prs'], 'PR')}: {t[APPLICABLE]:,} applicable, {t[EXCLUDED]:,} excluded, "
        f"{t[MIRRORED]:,} mirrored; {plural(t['direct_commits'], 'direct commit')}"
    )
    for note in result.notes:
        output.warn(note)


def walk_command(
    upstream: UpstreamOpt = None,
    range_: RangeOpt = None,
    policy: PolicyOpt = None,
    downstream: DownstreamOpt = None,
    downstream_rev: DownstreamRevOpt = None,
    pr_metadata: PrMetadataOpt = None,
    github: GithubOpt = False,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Walk an upstream commit range into merged PRs and classify them (applicable/excluded/mirrored)."""
    # Imported here, not at the top: every command would pay for them at start-up.
    from vimesync.config import load_config
    from vimesync.upstream.pipeline import walk_and_classify

    as_json = output_format(fmt, json_) == "json"
    cfg = load_config(config)
    result = walk_and_classify(
        upstream,
        range_,
        policy=policy,
        downstream=downstream,
        pr_metadata=pr_metadata,
        github=github,
        config=cfg,
        downstream_rev=downstream_rev,
    )
    empty = not result.prs and not result.direct_commits
    if as_json:
        doc = result_json(result)
        if empty:
            doc["message"] = "nothing to sync"
        output.emit_json(doc)
    elif empty:
        output.out(f"nothing to sync: {result.base[:12]}..{result.tip[:12]} is empty")
    else:
        _render(result)
    return 0
