"""The engine patch stack: the pinned source, the series, how it is applied and parsed, which
engine, and which lint codes are reported."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

SourceOpt = Annotated[
    Path | None,
    typer.Option(
        "--source",
        metavar="PATH",
        help="Engine source: git repo (work tree or bare), directory, .whl/.zip/.tar.gz (default: the pin).",
    ),
]
RevOpt = Annotated[
    str | None,
    typer.Option(
        "--rev",
        metavar="REV",
        help="For a git source: the commit-ish to check (default: the pin's rev).",
    ),
]
SeriesOpt = Annotated[
    Path | None,
    typer.Option(
        "--series",
        metavar="PATH",
        help="Quilt series file (default: the pin's series).",
    ),
]
StripOpt = Annotated[
    int | None, typer.Option("--strip", metavar="N", min=0, help="Default -pN for patches (default 1).")
]
PythonOpt = Annotated[
    str | None,
    typer.Option("--python", metavar="X.Y", help="Grammar target (default: what the tree declares)."),
]
ExportOpt = Annotated[
    Path | None,
    typer.Option(
        "--export",
        metavar="PATH",
        help="Write the whole patched tree here (must be empty or absent).",
    ),
]
KeepGoingOpt = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="Go on after a failing patch (left out whole, as git apply without --reject"
        " leaves it) and try every hunk of a failing file.",
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Parse every file afresh.")]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        metavar="NAME",
        help="An engine by name (its pin: pins/<name>.toml): only that engine of the config"
        " (default: every engine it names).",
    ),
]
InitEngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine", metavar="NAME", help="The engine to set up (its pin: pins/<name>.toml), e.g. SGLang."
    ),
]


class ApplierChoice(str, Enum):
    """Whose semantics ``patches check --applier`` applies the stack with."""

    git = "git"
    gnu_patch = "gnu-patch"


ApplierOpt = Annotated[
    ApplierChoice | None,
    typer.Option(
        "--applier",
        help="Apply the stack as git apply does (git, the default) or as GNU patch does (gnu-patch:"
        " offsets that accumulate, fuzz); overrides the pin's applier.",
    ),
]
FuzzOpt = Annotated[
    int | None,
    typer.Option(
        "--fuzz",
        metavar="N",
        min=0,
        help="With --applier gnu-patch: GNU's --fuzz=N, context lines a hunk may ignore at each end"
        " (default: the pin's, else 2).",
    ),
]
StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Stricter verdicts: lint also applies the stack to the source (a hunk at an offset is a"
        " finding); check fails a hunk that applied only with fuzz, and with --keep-going a patch the"
        " source already holds.",
    ),
]
EngineRepoOpt = Annotated[
    str | None,
    typer.Option("--engine-repo", metavar="OWNER/NAME", help="Engine owner/name, e.g. sgl-project/sglang."),
]

# Linting the stack.
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        metavar="CODE",
        help="Report only these lint codes, repeatable; a prefix selects a family (W, H00).",
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option("--ignore", metavar="CODE", help="Never report these lint codes (or prefixes), repeatable."),
]
