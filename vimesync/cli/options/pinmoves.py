"""Moving the engine pin: ``pin bump``, ``pin scan``, ``pin radar``, and the refresh of the
patches a bump left in conflict."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

EngineArg = Annotated[
    str | None, typer.Argument(metavar="ENGINE", help="The engine (default: the configured one).")
]
ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to",
        metavar="REV|SOURCE",
        help="The new pin: a revision of the current git source, or a source"
        " (git repo, directory, .whl/.zip/.tar.gz).",
    ),
]
WriteOpt = Annotated[bool, typer.Option("--write", help="Update the pin file (atomically, comments kept).")]
ReleasesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--to",
        metavar="REV|SOURCE",
        help="A release to scan (repeat it): a revision or tag of the current git source, a source"
        " (git repo, directory, .whl/.zip/.tar.gz) or pypi:NAME==VERSION.",
    ),
]
MergeOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--merge",
        metavar="FILE",
        help="Merge these per-release --json documents (one CI job each) into one matrix.",
    ),
]
SvgOpt = Annotated[
    Path | None,
    typer.Option("--svg", metavar="FILE", help="Also write the matrix as an SVG picture here."),
]
OfflineOpt = Annotated[
    bool,
    typer.Option("--offline", help="Ask GitHub nothing: say what could not be asked."),
]
BackportsOpt = Annotated[
    str | None,
    typer.Option(
        "--to",
        metavar="REV|SOURCE",  # one metavar per flag (tests/cli/test_contract.py): here a REV only
        help="List the engine commits after the pin up to this revision of the git source that touch"
        " the files the stack patches (newest first): backport candidates.",
    ),
]
BackportsFlagOpt = Annotated[
    bool,
    typer.Option(
        "--backports",
        help="List backport candidates up to the git source's HEAD (its default branch); --to REV"
        " names another revision.",
    ),
]
MaxCandidatesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-candidates",
        metavar="N",
        min=0,
        help="Backport candidates listed at most (default 50); the rest are counted.",
    ),
]
RefreshOpt = Annotated[
    bool,
    typer.Option(
        "--refresh",
        help="Rewrite the patches whose hunks moved or that merge cleanly in 3 ways, comment out the ones"
        " already applied; all together or nothing.",
    ),
]
ConflictsOpt = Annotated[
    Path | None,
    typer.Option(
        "--conflicts",
        metavar="PATH",
        help="With --refresh: write the merged files of conflicting patches here (empty, absent or an earlier"
        " bump's; default: .vimesync/bump at the checkout's root).",
    ),
]
FromOpt = Annotated[
    Path | None,
    typer.Option(
        "--from",
        metavar="PATH",
        help="The work folder of `pin bump --refresh` holding the edited merged files"
        " (default: .vimesync/bump at the checkout's root).",
    ),
]
