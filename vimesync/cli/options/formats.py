"""What a command prints and where: ``--format`` (an Enum typer checks) and ``--json``, the
same as ``--format json`` (:func:`output_format` joins the two and refuses a contradiction), the
files a command writes, and the CI-native outputs every checking command takes."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from vimesync.errors import BadInput


class Format(str, Enum):
    """What ``walk``, ``patches check``, ``audit`` and ``audit review`` print."""

    text = "text"
    json = "json"


class DocFormat(str, Enum):
    """What ``report`` and ``demo`` print: their text is Markdown (``text`` is the same)."""

    markdown = "markdown"
    text = "text"
    json = "json"


class TableFormat(str, Enum):
    """What ``pin bump``, ``pin scan`` and ``pin radar`` print: a terminal table, JSON, or GitHub
    Markdown (bump: a pull-request body)."""

    text = "text"
    json = "json"
    markdown = "markdown"


def output_format(fmt: Format | DocFormat | TableFormat | None, json_flag: bool) -> str:
    """``"json"`` or the command's text form; ``--json`` with a ``--format`` other than json is refused."""
    if json_flag and fmt is not None and fmt.value != "json":
        raise BadInput(f"--json contradicts --format {fmt.value}: give one of them")
    if json_flag:
        return "json"
    return fmt.value if fmt is not None else "text"


# Output.
FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        metavar="text|json",
        case_sensitive=False,
        help="Output format (default: text).",
    ),
]
DocFormatOpt = Annotated[
    DocFormat | None,
    typer.Option(
        "--format",
        metavar="markdown|json",
        case_sensitive=False,
        help="Output format (default: markdown; text is the same).",
    ),
]
TableFormatOpt = Annotated[
    TableFormat | None,
    typer.Option(
        "--format",
        metavar="text|json|markdown",
        case_sensitive=False,
        help="Output format (default: text; markdown: a GitHub-flavoured table).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout (= --format json).")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", metavar="PATH", help="Write the document here instead of stdout.")
]
SyncOutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", metavar="PATH", help="Write the sync report here (default: .vimesync/sync-report.md)."
    ),
]
PublishOpt = Annotated[
    str | None,
    typer.Option(
        "--publish",
        metavar="OWNER/REPO#N",
        help="Put the report into that PR's description, between markers.",
    ),
]
KeepOpt = Annotated[
    Path | None,
    typer.Option(
        "--keep",
        metavar="PATH",
        help="Build the example here (an empty or new folder) and leave it to explore.",
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")]


# CI-native outputs (every command that checks something).
class Annotations(str, Enum):
    """Where annotations go: GitHub Actions workflow commands, none, or GitHub's when under it."""

    auto = "auto"
    github = "github"
    none = "none"


JunitOpt = Annotated[
    Path | None,
    typer.Option("--junit", metavar="PATH", help="Also write the result as JUnit XML here."),
]
AnnotationsOpt = Annotated[
    Annotations,
    typer.Option(
        "--annotations",
        metavar="auto|github|none",
        case_sensitive=False,
        help="github: GitHub Actions annotations and a job summary ($GITHUB_STEP_SUMMARY); "
        "auto (default): github when GITHUB_ACTIONS=true.",
    ),
]
