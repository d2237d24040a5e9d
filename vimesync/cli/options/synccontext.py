"""The sync's context: where the config, the upstream and the downstream are, the upstream range
and its PR metadata, and the commits and names a sync is audited and recorded under (baseline,
head, ledger)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Where things are.
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="PATH",
        help="Config file (default: $VIMESYNC_CONFIG, else the first vimesync.toml from here up to the "
        "repository root).",
    ),
]
# One flag may mean a little more in one command: that command then has its own alias, whose help
# says what the flag does there (never what another command does with it).
UpstreamOpt = Annotated[
    Path | None,
    typer.Option("--upstream", metavar="PATH", help="Upstream clone or bare mirror (default: config)."),
]
# init: a URL too, kept as typed (a Path would fold "https://" into "https:/").
UpstreamLocationOpt = Annotated[
    str | None,
    typer.Option(
        "--upstream",
        metavar="PATH",
        help="Upstream clone or bare mirror (read for its owner/name, branch and last synced commit), "
        "or its URL.",
    ),
]
DownstreamOpt = Annotated[
    Path | None,
    typer.Option(
        "--downstream",
        metavar="PATH",
        help="Downstream repository (default: config, else the repository of the current folder).",
    ),
]
WalkDownstreamOpt = Annotated[
    Path | None,
    typer.Option(
        "--downstream",
        metavar="PATH",
        help="Downstream repository whose history marks PRs mirrored (default: config; none: no PR is).",
    ),
]
InitDownstreamOpt = Annotated[
    Path | None,
    typer.Option(
        "--downstream",
        metavar="PATH",
        help="Where to write the files (default: the repository of the current folder, else the folder).",
    ),
]
PolicyOpt = Annotated[
    Path | None,
    typer.Option("--policy", metavar="PATH", help="Policy TOML ([[rule]] tables; default: config)."),
]

# The upstream range and PR metadata.
RangeOpt = Annotated[
    str | None,
    typer.Option(
        "--range",
        metavar="BASE..TIP",
        help="Upstream range (default: last-synced pin .. upstream branch); TIP alone: all history.",
    ),
]
DownstreamRevOpt = Annotated[
    str | None,
    typer.Option(
        "--downstream-rev",
        metavar="REV",
        help="Read the downstream at this rev (e.g. the pre-sync baseline).",
    ),
]
PrMetadataOpt = Annotated[
    Path | None,
    typer.Option(
        "--pr-metadata", metavar="PATH", help="JSON from gh pr list --json number,title,labels,… (labels)."
    ),
]
GithubOpt = Annotated[bool, typer.Option("--github", help="Fetch PR titles and labels via the GitHub API.")]
UpstreamRepoOpt = Annotated[
    str | None,
    typer.Option(
        "--upstream-repo",
        metavar="OWNER/NAME",
        help="Upstream owner/name for links (default: config, else the origin remote).",
    ),
]
AcceptSimilarOpt = Annotated[
    bool,
    typer.Option(
        "--accept-similar",
        help="Count a PR found downstream only by similar content as carried (it is otherwise a"
        " suggestion: 'looks mirrored', still applicable).",
    ),
]

# The changed-path audit and its review ledger.
BaselineOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="REV",
        help="The pre-sync downstream commit: the baseline the changed paths are audited against.",
    ),
]
HeadOpt = Annotated[str, typer.Option("--head", metavar="REV", help="The sync head.")]
UpstreamTipOpt = Annotated[
    str | None,
    typer.Option("--upstream-tip", metavar="REV", help="Upstream tip (default: the config's branch)."),
]
UpstreamBaseOpt = Annotated[
    str | None,
    typer.Option(
        "--upstream-base",
        metavar="REV",
        help="Upstream base, for the ledger name (default: the pin).",
    ),
]
SyncOpt = Annotated[
    str | None,
    typer.Option("--sync", metavar="NAME", help="Review ledger name (default: <upstream base8>..<tip8>)."),
]
MapOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--map",
        metavar="SRC=DST",
        help="Path map upstream=downstream, repeatable (default: config).",
    ),
]
ByOpt = Annotated[str, typer.Option("--by", metavar="NAME", help="Who reviewed.")]
ReviewPathsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="PATH...", help="Paths (files, or folders for every changed file under them)."),
]
AllUnreviewedOpt = Annotated[
    bool,
    typer.Option(
        "--all-unreviewed",
        help="Every path the audit lists as unreviewed or stale (no PATH given).",
    ),
]
