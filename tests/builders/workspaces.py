"""Workspaces and engine plans built in code, for tests of the steps below the CLI: a
:class:`~vimesync.app.workspace.Workspace` over a ``Config`` object (no vimesync.toml needed),
and the check plan of a config with the flags given by keyword."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vimesync.app.flags import SyncFlags
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.check.model import CheckOptions, PlanRules, check_options, check_plan
from vimesync.config import Config
from vimesync.readers import WORKTREE
from vimesync.settings import Settings


def workspace(
    config: Config | None = None,
    *,
    downstream: Path | None = None,
    environ: dict[str, str] | None = None,
    **flags: Any,
) -> Workspace:
    """A workspace reading the working tree: ``config`` as the checkout's, the job's ``environ``
    (None: empty), the sync flags given (``upstream=``, ``range_=``, ``policy=``...), the
    downstream (None: none)."""
    cfg = config or Config()
    return Workspace(
        settings=Settings.of(environ or {}),
        flags=SyncFlags(downstream=downstream, **flags),
        checkout=cfg,
        config=cfg,
        reader=WORKTREE,
        downstream=downstream,
        head=None,
        baseline=flags.get("baseline"),
        cwd=downstream or Path.cwd(),
    )


def plan(
    config: Config, *, untrusted: bool = False, require_exact: bool = False, **flags: Any
) -> tuple[CheckOptions, ...]:
    """``check_plan`` with the engine flags by keyword (``engine=``, ``source=``, ``series=``...)."""
    return check_plan(
        config, EngineFlags(**flags), PlanRules(untrusted=untrusted, require_exact=require_exact)
    )


def options(
    config: Config, *, untrusted: bool = False, require_exact: bool = False, **flags: Any
) -> CheckOptions:
    """``check_options``: the plan of exactly one engine."""
    return check_options(
        config, EngineFlags(**flags), PlanRules(untrusted=untrusted, require_exact=require_exact)
    )
