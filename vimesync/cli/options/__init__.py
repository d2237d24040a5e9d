"""Every command-line option, declared once: one name, one metavar, one help text per meaning.

A command takes its options as these ``Annotated`` aliases, so ``--config`` (or ``--upstream``,
``--format``...) reads and means the same in every command. A new option goes here first: in the
module of the concept it serves, named below. One flag may mean a little more in one command: that
command then has its own alias beside the common one, whose help says what the flag does there.

Output format: every command takes ``--format`` (an Enum typer checks) and ``--json``, the same as
``--format json``; :func:`output_format` joins the two and refuses a contradiction.

The package, by concept: ``synccontext`` (config, upstream, downstream, the range and its PR
metadata, baseline, head, the review ledger), ``patchstack`` (the engine source, series, applier,
parse, lint codes), ``patchheaders`` (a patch by name, its DEP-3 fields), ``pinmoves`` (``pin
bump``/``scan``/``radar``, the refresh after a bump), ``carrying`` (``carry``, and the modes of
``carry``/``sync`` in progress), ``headevidence`` (exact-head CI, gates, the records of what ran at
the head, regressions), ``containers`` (images and their promotion), ``formats`` (``--format``,
``--json``, the files a command writes, ``--junit``/``--annotations``). Commands use this package's
names, never a submodule's.

A module is imported when a command first names one of its aliases (PEP 562 ``__getattr__``):
``walk`` pays for the sync context and the formats, not for the records of ``sop``. A new alias
joins its module and that module's line of :data:`_NAMES`, the one listing of the package's names
(tests/cli/test_options_package.py checks it against the modules); type checkers read the
modules' names through the star imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names as mypy reads them (a run imports a module on first use, below)
    from vimesync.cli.options.carrying import *  # noqa: F403
    from vimesync.cli.options.containers import *  # noqa: F403
    from vimesync.cli.options.formats import *  # noqa: F403
    from vimesync.cli.options.headevidence import *  # noqa: F403
    from vimesync.cli.options.patchheaders import *  # noqa: F403
    from vimesync.cli.options.patchstack import *  # noqa: F403
    from vimesync.cli.options.pinmoves import *  # noqa: F403
    from vimesync.cli.options.synccontext import *  # noqa: F403

# Each module's names: the one listing of the package's aliases.
_NAMES = {
    "carrying": """
        AbortOpt BaseOpt BotDryRunOpt BotRepoOpt BranchOpt ContinueOpt DirectOpt DryRunOpt OntoOpt
        PrOpt RemoteOpt SkipOpt SquashOpt StatusOpt SyncAbortOpt SyncContinueOpt SyncStatusOpt
        WorktreeOpt
    """,
    "containers": """
        ArchOpt BlockedOpt BuildHostOpt DigestOpt ImageRefOpt PromoteDigestOpt PromoteRefOpt
        RegistryInsecureOpt VerifyImageOpt
    """,
    "formats": """
        Annotations AnnotationsOpt DocFormat DocFormatOpt ForceOpt Format FormatOpt JsonOpt
        JunitOpt KeepOpt OutputOpt PublishOpt SyncOutputOpt TableFormat TableFormatOpt
        output_format
    """,
    "headevidence": """
        BeforeOpt BuildOpt CiPrOpt CiRepoOpt CiShaOpt DurationOpt ExitOpt FigureOpt HeadPrOpt
        HostOpt ImageDigestOpt JunitInOpt MatrixNameOpt NoteOpt PipelineOpt PreCommitOpt
        PrecommitTimeoutOpt RegressTimeoutOpt ReplaceOpt RepoOpt RequireOpt RunNameOpt ShaOpt SkipGateOpt
        SuiteOpt TestIdOpt TestPythonOpt RunTimeoutOpt KeepEnvOpt ExpectExitOpt ExpectOutputOpt
        RetriesOpt AgainOpt RunCommandArg RunJunitOpt FiguresFileOpt RunWorktreeOpt
    """,
    "patchheaders": """
        AppliedUpstreamOpt BugOpt DescriptionOpt ForwardedOpt OriginKindOpt OriginOpt PatchNameArg
    """,
    "patchstack": """
        ApplierChoice ApplierOpt EngineOpt EngineRepoOpt ExportOpt FuzzOpt IgnoreOpt InitEngineOpt
        KeepGoingOpt NoCacheOpt PythonOpt RevOpt SelectOpt SeriesOpt SourceOpt StrictOpt StripOpt
    """,
    "pinmoves": """
        BackportsFlagOpt BackportsOpt ConflictsOpt EngineArg FromOpt MaxCandidatesOpt MergeOpt
        OfflineOpt RefreshOpt ReleasesOpt SvgOpt ToOpt WriteOpt
    """,
    "synccontext": """
        AcceptSimilarOpt AllUnreviewedOpt BaselineOpt ByOpt ConfigOpt DownstreamOpt DownstreamRevOpt GithubOpt
        HeadOpt InitDownstreamOpt MapOpt PolicyOpt PrMetadataOpt RangeOpt ReviewPathsArg SyncOpt
        UpstreamBaseOpt UpstreamLocationOpt UpstreamOpt UpstreamRepoOpt UpstreamTipOpt
        WalkDownstreamOpt
    """,
}
_MODULE_OF = {name: module for module, names in _NAMES.items() for name in names.split()}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> object:
    """The alias ``name``, its module imported on first use (then kept here: asked once)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
