"""``vimesync sop record precommit`` as a use case: ``pre-commit run --files`` of the paths the
sync's audit lists, at the head itself (a temporary worktree), each hook's result recorded in
``sop/records/<sync>.toml`` for the evidence head (:mod:`vimesync.sop.precommit`).

It runs the repository's hooks, so it is refused in an untrusted checkout (there the same
evidence is a required CI context). pre-commit is the job's: ``--pre-commit PATH`` (outside the
checkout), else ``python3 -I -m pre_commit`` of the running interpreter (``-I``: a
``pre_commit/`` folder in the checkout is not imported)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from vimesync.app.evidence import RecordResult, evidence_heads
from vimesync.app.progress import Phases, Progress, no_progress
from vimesync.app.recordchecks import refuse_modified, replaced_record
from vimesync.app.result import Kind
from vimesync.app.toolruns import (
    check_timeout,
    program,
    records_text,
    refuse_changed_records,
    refuse_untrusted,
)
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput, JobStopped
from vimesync.text import plural

DEFAULT_TIMEOUT = 600.0
MAX_FILES = 50_000
MAX_ARGV_BYTES = 1 << 20  # the paths on one command line (the kernel's limit is about 2 MiB)
CONFIG = ".pre-commit-config.yaml"


@dataclass(frozen=True)
class RecordPrecommitRequest:
    pre_commit: Path | None = None  # the job's pre-commit (default: python3 -I -m pre_commit)
    timeout: float | None = None  # seconds (default 600)
    replace: bool = False  # the pre-commit record at the evidence head may be replaced


def changed_paths(ws: Workspace) -> tuple[str, ...]:
    """The paths the sync's audit lists that the head still holds (pre-commit checks files)."""
    from vimesync.app import steps
    from vimesync.audit.model import ABSENT

    return tuple(p.path for p in steps.audit(ws).paths if p.head_oid != ABSENT)


def record_precommit(
    ws: Workspace, request: RecordPrecommitRequest, *, progress: Progress = no_progress
) -> RecordResult:
    """Run pre-commit on the sync's changed files at the head; record each hook's result
    (``progress``: each of its three steps)."""
    from vimesync.safefs import excerpt, scratch_dir
    from vimesync.sop.precommit import NAME, PrecommitRecord, parse_output, precommit_values
    from vimesync.sop.results import now, write_table
    from vimesync.sop.toolrun import last_line, run_tool, tool_env
    from vimesync.sop.worktree import temporary_worktree

    refuse_untrusted(
        ws.untrusted,
        "sop record precommit",
        "in CI, run pre-commit as a job and require its context (sop/gates.toml [ci])",
    )
    timeout = check_timeout(request.timeout, DEFAULT_TIMEOUT)
    down = ws.require_downstream()
    cmd = (
        [program(request.pre_commit, "--pre-commit", down)]
        if request.pre_commit is not None
        else [sys.executable, "-I", "-m", "pre_commit"]
    )
    # a path from upstream named "--config=x.yaml" must stay a path, for pre-commit's own options
    # (which config, which hooks) and for the hooks it hands the names to: "./" keeps it one
    step = Phases(progress, "sop record precommit", 3)
    with step("listing the changed paths"):
        paths = tuple(f"./{p}" if p.startswith("-") else p for p in changed_paths(ws))
    if len(paths) > MAX_FILES or sum(len(p) + 1 for p in paths) > MAX_ARGV_BYTES:
        raise BadInput(f"the sync changed {len(paths):,} paths: too many for one pre-commit command line")
    name = ws.sync_name
    with step("finding the evidence head"):
        head, bound = evidence_heads(ws)
        # checked before pre-commit runs (minutes), not after
        refuse_modified(down, ws.bookkeeping, name)
        old = replaced_record(ws.sop_root, name, "precommit", NAME, bound, replace=request.replace)
        records_before = records_text(ws.sop_root, name)
    with scratch_dir("vimesync-precommit-") as scratch:
        with temporary_worktree(down, head, Path(scratch) / "head") as tree:
            config = tree / CONFIG
            if config.is_symlink() or not config.is_file():
                raise BadInput(f"{CONFIG}: the head {head[:12]} has none (nothing for pre-commit to run)")
            argv = [*cmd, "run", "--verbose", "--color", "never", "--files", *paths]
            env = tool_env({"PRE_COMMIT_COLOR": "never", "SKIP": ""})
            with step(f"pre-commit at {head[:12]} on {plural(len(paths), 'file')}"):
                run = run_tool(argv, cwd=tree, timeout=timeout, env=env)
    text = run.output.decode("utf-8", "replace")
    if run.code is None:
        raise JobStopped(f"pre-commit stopped: it {run.stopped} (--timeout {timeout:g}); nothing recorded")
    hooks = parse_output(text)
    if run.code not in (0, 1) or (run.code == 1 and not hooks):
        why = excerpt(last_line(run.output), 160)
        raise BadInput(f"pre-commit did not run its hooks (exit {run.code}): {why}")
    refuse_changed_records(ws.sop_root, name, records_before, "pre-commit")
    rec = PrecommitRecord(sha=bound, exit=run.code, files=len(paths), hooks=hooks, recorded_at=now())
    path = write_table(ws.sop_root, name, "precommit", NAME, bound, precommit_values(rec))
    result = RecordResult(
        sync=name, record=rec, file=path, head=head, kind=Kind.RECORD_PRECOMMIT, judged=True
    )
    return result.replacing("precommit", old)
