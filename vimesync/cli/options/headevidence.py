"""Exact-head CI evidence, the gates of the sync procedure, and the records of what ran at the
head: test suites, runs, CI builds, pre-commit, before/after regressions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RepoOpt = Annotated[
    str | None,
    typer.Option(
        "--repo", metavar="OWNER/NAME", help="Where CI reports (default: [ci] repo; in CI, the job's)."
    ),
]
CiShaOpt = Annotated[
    str | None, typer.Option("--sha", metavar="SHA", help="The exact commit to judge (full sha).")
]
ShaOpt = Annotated[
    str | None,
    typer.Option(
        "--sha", metavar="SHA", help="The exact commit (full sha); for a record it must be the head."
    ),
]
CiRepoOpt = Annotated[
    str | None,
    typer.Option(
        "--ci-repo",
        metavar="OWNER/NAME",
        help="Read the head's exact CI from this repository (default: [ci] repo, or --publish's).",
    ),
]
CiPrOpt = Annotated[
    int | None,
    typer.Option("--ci-pr", metavar="N", min=1, help="The PR whose current head --head must be."),
]
RequireOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--require",
        metavar="CHECK",
        help="A CI context that must be green at the head, repeatable (default: [ci] required).",
    ),
]
SkipGateOpt = Annotated[
    list[str] | None,
    typer.Option("--skip-gate", metavar="NAME", help="Switch a gate off, repeatable (see sop/SYNC.md)."),
]
HeadPrOpt = Annotated[
    list[int] | None,
    typer.Option(
        "--pr",
        metavar="N",
        min=1,
        help="The downstream PR whose current head is judged (its earlier commits are not evidence).",
    ),
]

# Records of what ran at the head.
SuiteOpt = Annotated[
    str,
    typer.Option(
        "--suite", metavar="NAME", help="The suite's name as the report shows it (CPU regressions)."
    ),
]
JunitInOpt = Annotated[
    Path,
    typer.Option(
        "--junit",
        metavar="PATH",  # as everywhere --junit is; here it is read, not written
        help="Read: the JUnit XML the suite wrote (pytest --junitxml, Surefire, Jest, gotestsum).",
    ),
]
PipelineOpt = Annotated[
    str | None,
    typer.Option(
        "--pipeline",
        metavar="ORG/PIPELINE",
        help="The Buildkite pipeline whose build of the head is read (default: [ci] buildkite).",
    ),
]
BuildOpt = Annotated[
    int | None,
    typer.Option("--build", metavar="N", min=0, help="The Buildkite build (default: the commit's newest)."),
]
ImageDigestOpt = Annotated[
    str | None,
    typer.Option("--image", metavar="sha256:HEX", help="The image digest it ran in (optional)."),
]
RunNameOpt = Annotated[
    str, typer.Option("--name", metavar="NAME", help="The run's name as the report shows it.")
]
ExitOpt = Annotated[
    int | None,
    typer.Option("--exit", metavar="N", help="Typed: the run's exit status (0: it passed); no job after --."),
]
RunCommandArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[-- CMD [ARG...]]",
        help="The job vimesync runs itself at the head (no shell) and records as measured.",
        show_default=False,
    ),
]
RunTimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", metavar="SECONDS", help="Stop the job (its process group) after this long."),
]
KeepEnvOpt = Annotated[
    list[str] | None,
    typer.Option("--keep-env", metavar="NAME", help="Pass this secret-like variable to the job, repeatable."),
]
ExpectExitOpt = Annotated[
    int | None,
    typer.Option("--expect-exit", metavar="N", help="A control run: the exit status it must end with."),
]
ExpectOutputOpt = Annotated[
    str | None,
    typer.Option(
        "--expect-output", metavar="REGEX", help="A control run: an RE2 pattern its output's tail must match."
    ),
]
RetriesOpt = Annotated[
    int, typer.Option("--retries", metavar="N", help="Rerun a job that did not do as expected, unchanged.")
]
RunJunitOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--junit", metavar="PATH", help="Read after the job: a JUnit XML file it wrote, repeatable (counted)."
    ),
]
FiguresFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--figures", metavar="PATH", help="Read after the job: a flat JSON object of figures it wrote."
    ),
]
RunWorktreeOpt = Annotated[
    bool,
    typer.Option(
        "--in-worktree", help="Run the job in a temporary worktree of the head, not the checkout root."
    ),
]
AgainOpt = Annotated[
    bool,
    typer.Option("--again", help="Record another independent run of the same name at the same head."),
]
DurationOpt = Annotated[
    str | None, typer.Option("--duration", metavar="TIME", help="How long it ran: 4m03s, 1h2m, 45s, 243.")
]
HostOpt = Annotated[str | None, typer.Option("--host", metavar="HOST", help="Where it ran.")]
FigureOpt = Annotated[
    list[str] | None,
    typer.Option("--figure", metavar="KEY=VALUE", help="A figure the run produced, repeatable."),
]
NoteOpt = Annotated[str | None, typer.Option("--note", metavar="TEXT", help="One line about the run.")]
ReplaceOpt = Annotated[
    bool,
    typer.Option(
        "--replace",
        help="Replace the record of the same name already at the evidence head (else refused).",
    ),
]
PreCommitOpt = Annotated[
    Path | None,
    typer.Option(
        "--pre-commit",
        metavar="PATH",
        help="The pre-commit program to run, outside the checkout (default: python3 -I -m pre_commit).",
    ),
]
PrecommitTimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", metavar="SECONDS", help="Stop pre-commit after this long (default: 600)."),
]

# Before/after regressions (sop regress).
RegressTimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", metavar="SECONDS", help="Stop each pytest run after this long (1800 s)."),
]
TestIdOpt = Annotated[
    list[str] | None,
    typer.Option("--test", metavar="NODEID", help="A pytest node id to run before and after, repeatable."),
]
BeforeOpt = Annotated[
    str | None,
    typer.Option("--before", metavar="REV", help="The commit to run them at first (default: the baseline)."),
]
TestPythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="X.Y",
        help="The interpreter the tests run with: X.Y, or an absolute path (default: this one).",
    ),
]
MatrixNameOpt = Annotated[
    str | None,
    typer.Option("--name", metavar="NAME", help="The matrix's name as the report shows it."),
]
