"""Every command-line option, declared once: one name, one metavar, one help text per meaning.

A command takes its options as these ``Annotated`` aliases, so ``--config`` (or ``--upstream``,
``--format``...) reads and means the same in every command. A new option goes here first.

Output format: every command takes ``--format`` (an Enum typer checks) and ``--json``, the same as
``--format json``; :func:`output_format` joins the two and refuses a contradiction.
"""

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

# The engine patch stack.
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


# Not listed under Arguments (typer would print a "<str>" type there): the docstring says what NAME is.
def _complete_patch(incomplete: str) -> list[str]:
    from vimesync.app.names import patch_names

    return patch_names(incomplete)


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
EngineRepoOpt = Annotated[
    str | None,
    typer.Option("--engine-repo", metavar="OWNER/NAME", help="Engine owner/name, e.g. sgl-project/sglang."),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")]

# Moving the engine pin.
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
    list[str],
    typer.Argument(metavar="PATH...", help="Paths (files, or folders for every changed file under them)."),
]

# Carrying upstream PRs.
PrOpt = Annotated[
    list[int] | None,
    typer.Option(
        "--pr",
        metavar="N",
        min=1,
        help="Carry only these upstream PRs, by number (repeatable).",
    ),
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
BranchOpt = Annotated[
    str | None,
    typer.Option("--branch", metavar="NAME", help="The new sync branch (default: sync/<tip8>)."),
]
OntoOpt = Annotated[str, typer.Option("--onto", metavar="REV", help="Start the sync branch here.")]
WorktreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--worktree",
        metavar="PATH",
        help="Folder of the sync branch's linked worktree (default: <checkout>.<branch> beside it).",
    ),
]
SquashOpt = Annotated[bool, typer.Option("--squash", help="One commit for every carried PR.")]
DirectOpt = Annotated[
    str,
    typer.Option(
        "--direct", metavar="skip|include", help="Direct pushes (no PR): skip them or carry them too."
    ),
]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print the plan and change nothing.")]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", help="Go on after the conflict was resolved and git added.")
]
SkipOpt = Annotated[bool, typer.Option("--skip", help="Leave out the conflicting PR (recorded) and go on.")]
AbortOpt = Annotated[
    bool, typer.Option("--abort", help="Remove the sync branch, its worktree and the carry's state.")
]
StatusOpt = Annotated[bool, typer.Option("--status", help="Say where the carry in progress stands.")]
SyncContinueOpt = Annotated[
    bool,
    typer.Option("--continue", help="Go on from the step the sync stopped at (done steps are not redone)."),
]
SyncAbortOpt = Annotated[
    bool,
    typer.Option("--abort", help="Forget the sync's state (and abort the carry in progress, if any)."),
]
SyncStatusOpt = Annotated[
    bool, typer.Option("--status", help="Say which steps of the sync are done, with their figures.")
]

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

# CI-native outputs (patches check, audit, report).


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

# Exact-head CI evidence and the gates of the sync procedure.
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
ArchOpt = Annotated[
    str, typer.Option("--arch", metavar="ARCH", help="amd64 or arm64 (sop/gates.toml [images]).")
]
DigestOpt = Annotated[
    str | None, typer.Option("--digest", metavar="sha256:HEX", help="The image manifest digest.")
]
BlockedOpt = Annotated[
    str | None,
    typer.Option(
        "--blocked",
        metavar="REASON",
        help="No image can be built for this architecture: why, one line (instead of --digest).",
    ),
]
ImageRefOpt = Annotated[
    str | None, typer.Option("--ref", metavar="IMAGE", help="The image reference (registry/name:tag).")
]

AcceptSimilarOpt = Annotated[
    bool,
    typer.Option(
        "--accept-similar",
        help="Count a PR found downstream only by similar content as carried (it is otherwise a"
        " suggestion: 'looks mirrored', still applicable).",
    ),
]
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
ExitOpt = Annotated[int, typer.Option("--exit", metavar="N", help="The run's exit status (0: it passed).")]
DurationOpt = Annotated[
    str | None, typer.Option("--duration", metavar="TIME", help="How long it ran: 4m03s, 1h2m, 45s, 243.")
]
HostOpt = Annotated[str | None, typer.Option("--host", metavar="HOST", help="Where it ran.")]
BuildHostOpt = Annotated[
    str | None,
    typer.Option(
        "--host", metavar="HOST", help="Where it was built (checked against [images] allowed_hosts)."
    ),
]
FigureOpt = Annotated[
    list[str] | None,
    typer.Option("--figure", metavar="KEY=VALUE", help="A figure the run produced, repeatable."),
]
NoteOpt = Annotated[str | None, typer.Option("--note", metavar="TEXT", help="One line about the run.")]
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
PromoteRefOpt = Annotated[
    str,
    typer.Option("--ref", metavar="IMAGE", help="The floating tag to move (registry/name:latest)."),
]
PromoteDigestOpt = Annotated[
    str | None,
    typer.Option(
        "--digest",
        metavar="sha256:HEX",
        help="What the tag moves to (default: the one image recorded; a multi-arch index: give it).",
    ),
]
VerifyImageOpt = Annotated[
    bool,
    typer.Option(
        "--verify",
        help="Check the image against its registry first (OCI API: the digest, and the"
        " org.opencontainers.image.revision label is the head); token: VIMESYNC_REGISTRY_TOKEN.",
    ),
]
RegistryInsecureOpt = Annotated[
    bool,
    typer.Option(
        "--registry-insecure",
        help="Plain http to the registry, for a loopback one only (also VIMESYNC_REGISTRY_INSECURE=1).",
    ),
]
