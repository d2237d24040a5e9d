"""The options of one command (or of ``carry`` and ``sync``), declared as groups the way the four
flag groups are (:mod:`vimesync.cli.groups`): each builds its use case's request by keyword when the
command runs, so a command takes its own options as one parameter::

    def record_image(settings: Settings, image: RecordImageRequest = IMAGE, ...) -> int: ...

A command that offers every flag of a group names the group; one that offers some, ``take``.
Each group is typed ``Any``, as ``take``'s marker is: the parameter's annotation is what the
command receives.
"""

from __future__ import annotations

from typing import Any

from vimesync.cli.groups import REQUIRED, Flag, Group, builds
from vimesync.errors import BadInput


def _one_mode(enum: str, **flags: bool) -> Any:
    """The mode the flags name (``--continue``...), at most one of them; none: a new run."""
    from importlib import import_module

    module, _, name = enum.partition(":")
    modes = getattr(import_module(module), name)
    given = [modes(f"--{flag.rstrip('_')}") for flag, on in flags.items() if on]
    if len(given) > 1:
        raise BadInput(f"{' and '.join(m.value for m in given)}: give one of them")
    return given[0] if given else modes("start")


INIT: Any = Group(
    "init",
    {
        "upstream": Flag("UpstreamLocationOpt"),
        "upstream_repo": Flag("UpstreamRepoOpt"),
        "maps": Flag("MapOpt"),
        "engine": Flag("InitEngineOpt"),
        "engine_repo": Flag("EngineRepoOpt"),
        "rev": Flag("RevOpt"),
        "source": Flag("SourceOpt"),
        "downstream": Flag("InitDownstreamOpt"),
        "force": Flag("ForceOpt", False),
    },
    builds("vimesync.app.init:InitRequest", tuples=("maps",)),
)
# What a new carry (or the carry step of a sync) does.
CARRY: Any = Group(
    "carry",
    {
        "prs": Flag("PrOpt"),
        "branch": Flag("BranchOpt"),
        "onto": Flag("OntoOpt", "HEAD"),
        "worktree": Flag("WorktreeOpt"),
        "squash": Flag("SquashOpt", False),
        "direct": Flag("DirectOpt", "skip"),
        "dry_run": Flag("DryRunOpt", False),
    },
    builds("vimesync.carry.run:CarryOptions", tuples=("prs",)),
)
CARRY_MODE: Any = Group(
    "carry mode",
    {
        "continue_": Flag("ContinueOpt", False),
        "skip": Flag("SkipOpt", False),
        "abort": Flag("AbortOpt", False),
        "status": Flag("StatusOpt", False),
    },
    lambda **flags: _one_mode("vimesync.app.carry:CarryMode", **flags),
)
SYNC_MODE: Any = Group(
    "sync mode",
    {
        "continue_": Flag("SyncContinueOpt", False),
        "abort": Flag("SyncAbortOpt", False),
        "status": Flag("SyncStatusOpt", False),
    },
    lambda **flags: _one_mode("vimesync.app.syncresult:SyncMode", **flags),
)
DESCRIBE: Any = Group(
    "describe",
    {
        "name": Flag("PatchNameArg", REQUIRED),
        "description": Flag("DescriptionOpt", REQUIRED),
        "origin": Flag("OriginOpt"),
        "origin_kind": Flag("OriginKindOpt", "upstream"),
        "bug": Flag("BugOpt"),
        "forwarded": Flag("ForwardedOpt"),
        "applied_upstream": Flag("AppliedUpstreamOpt"),
    },
    builds("vimesync.app.lint:DescribeRequest", tuples=("origin", "bug")),
)
IMAGE: Any = Group(
    "record image",
    {
        "arch": Flag("ArchOpt", REQUIRED),
        "digest": Flag("DigestOpt"),
        "blocked": Flag("BlockedOpt"),
        "host": Flag("BuildHostOpt"),
        "ref": Flag("ImageRefOpt"),
        "verify": Flag("VerifyImageOpt", False),
        "registry_insecure": Flag("RegistryInsecureOpt", False),
        "sha": Flag("ShaOpt"),
    },
    builds("vimesync.app.images:RecordImageRequest"),
)
RUN: Any = Group(
    "record run",
    {
        "name": Flag("RunNameOpt", REQUIRED),
        "exit": Flag("ExitOpt"),
        "duration": Flag("DurationOpt"),
        "host": Flag("HostOpt"),
        "image": Flag("ImageDigestOpt"),
        "figures": Flag("FigureOpt"),
        "note": Flag("NoteOpt"),
        "replace": Flag("ReplaceOpt", False),
        "timeout": Flag("RunTimeoutOpt"),
        "keep_env": Flag("KeepEnvOpt"),
        "expect_exit": Flag("ExpectExitOpt"),
        "expect_output": Flag("ExpectOutputOpt"),
        "retries": Flag("RetriesOpt", 0),
        "again": Flag("AgainOpt", False),
        "junit": Flag("RunJunitOpt"),
        "figures_file": Flag("FiguresFileOpt"),
        "worktree": Flag("RunWorktreeOpt", False),
        "command": Flag("RunCommandArg"),
    },
    builds("vimesync.app.evidence:RecordRunRequest", tuples=("figures", "keep_env", "junit", "command")),
)
REGRESS: Any = Group(
    "regress",
    {
        "tests": Flag("TestIdOpt"),
        "before": Flag("BeforeOpt"),
        "python": Flag("TestPythonOpt"),
        "name": Flag("MatrixNameOpt"),
        "timeout": Flag("RegressTimeoutOpt"),
        "replace": Flag("ReplaceOpt", False),
    },
    builds("vimesync.app.regress:RegressRequest", tuples=("tests",)),
)
