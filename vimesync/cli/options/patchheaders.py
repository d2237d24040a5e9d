"""One patch of the stack by name, and the DEP-3 header fields ``patches describe`` sets."""

from __future__ import annotations

from typing import Annotated

import typer


# Not listed under Arguments (typer would print a "<str>" type there): the docstring says what NAME is.
def _complete_patch(ctx: typer.Context, incomplete: str) -> list[str]:
    from vimesync.app.names import patch_names

    return patch_names(ctx.obj, incomplete) if ctx.obj is not None else []


PatchNameArg = Annotated[str, typer.Argument(metavar="NAME", hidden=True, autocompletion=_complete_patch)]
DescriptionOpt = Annotated[
    str,
    typer.Option(
        "--description",
        metavar="WORDS",
        help="What the patch does and why (its first line is the purpose the report shows).",
    ),
]
OriginOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--origin",
        metavar="REF",
        help="Upstream PR or commit the patch comes from: a URL, owner/repo#N or commit:<sha> (repeatable).",
    ),
]
OriginKindOpt = Annotated[
    str,
    typer.Option(
        "--origin-kind",
        metavar="KIND",
        help="The DEP-3 Origin category: upstream (taken from upstream), backport, vendor (written"
        " here) or other.",
    ),
]
BugOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--bug", metavar="REF", help="The bug (issue) the patch fixes: a URL or owner/repo#N (repeatable)."
    ),
]
ForwardedOpt = Annotated[
    str | None,
    typer.Option(
        "--forwarded",
        metavar="REF",
        help="Where the patch was sent upstream (a URL or owner/repo#N), or no, or not-needed.",
    ),
]
AppliedUpstreamOpt = Annotated[
    str | None,
    typer.Option(
        "--applied-upstream",
        metavar="REF",
        help="The upstream commit that holds the patch: commit:<sha> or a URL (pin radar reads it).",
    ),
]
