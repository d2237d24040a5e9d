"""The steps of a sync, each once, over a resolved :class:`~vimesync.app.workspace.Workspace`:
the patch stack of every engine, the changed-path audit, its own commits, the exact-head CI (the
upstream side, the walk and what the head carries of it: :mod:`vimesync.app.upstreamsteps`).
``report``, ``sop status``, ``audit`` and ``vimesync sync`` all call these, so two commands cannot
work a fact out two ways.

Each returns the domain's model (or a :class:`Skipped` with the one line that says why not: a
report of what could be read is still a report); nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from vimesync import git
from vimesync.app.check import checked
from vimesync.app.flags import CiFlags
from vimesync.app.workspace import Workspace
from vimesync.audit.model import AuditResult
from vimesync.audit.owncommits import OwnChanges
from vimesync.check.flags import EngineFlags
from vimesync.check.model import CheckOptions, CheckReport, ProgressFn, engine_name
from vimesync.ci.verdict import CiEvidence
from vimesync.config import EnginePin
from vimesync.errors import BadInput, GitHubError
from vimesync.pins import pin_relpath, pinned_at
from vimesync.report.build import build_engine, engine_of_check
from vimesync.report.model import CI_NOT_ASKED, EnginePatches, Skipped

Section = tuple[EnginePatches | Skipped, CheckReport | Skipped]  # an engine's table and its Validation line


# --- the engines --------------------------------------------------------------------------------


def check_many(ws: Workspace, flags: EngineFlags) -> bool:
    """Several engines' sections (the config names several, or --engine picks one of them)."""
    return len(ws.config.engines) > 1 or flags.engine is not None


def previous_pin(ws: Workspace, pin: EnginePin) -> str | None:
    """The engine pin's ``rev`` as committed at the baseline."""
    if ws.downstream is None or ws.baseline is None:
        return None
    return pinned_at(ws.downstream, ws.baseline, pin.file, "engine", "rev")


def engine_sections(ws: Workspace, flags: EngineFlags, progress: ProgressFn | None = None) -> list[Section]:
    """Every engine's Engine patches table and Validation line: checked where a source is known,
    else the table from the series alone (nothing verified), marked against the baseline."""
    if check_many(ws, flags):
        sections = [
            _engine_section(ws, pin, opts, flags, progress) for pin, opts in _engine_inputs(ws, flags)
        ]
    else:
        sections = [_single_section(ws, flags, progress)]
    from vimesync.app.enginestate import with_upstream_state

    marked = [(mark_uncommitted(ws, mark_against_baseline(ws, table)), check) for table, check in sections]
    return [(with_upstream_state(ws, table, check), check) for table, check in marked]


def _single_section(ws: Workspace, flags: EngineFlags, progress: ProgressFn | None) -> Section:
    cfg, pin = ws.config, ws.config.engine
    has_source = (flags.source or pin.source or pin.package) is not None
    series = flags.series or pin.series
    if has_source and series is not None:
        (opts,) = ws.engine_plan(replace(flags, engine=None), require_exact=True)
        check = checked(ws, opts, progress)
        return engine_of_check(check, cfg.engine.repo, previous_pin(ws, pin)), check
    if series is None:
        return (
            Skipped("No engine source or series was given (--source/--series): no patch table."),
            Skipped("No engine source or series was given (--source/--series): the stack was not checked."),
        )
    strip = pin.strip if flags.strip is None else flags.strip
    table = engine_from_series(ws, series, strip=strip, pin=pin)
    return table, Skipped("No engine source was given (--source): the patch stack was not applied.")


def _engine_inputs(ws: Workspace, flags: EngineFlags) -> list[tuple[EnginePin, CheckOptions | None]]:
    """Every engine of a config that names several (or the one ``--engine`` names): checked when
    it has a source, else its series alone. With several engines a flag cannot say which engine
    it is for, so it is refused (check_plan says so, naming them)."""
    from vimesync.config import select_engine

    if flags.engine is None and flags.given():
        ws.engine_plan(flags)  # raises, naming the engines
    pins = [select_engine(ws.config, flags.engine)] if flags.engine else list(ws.config.engines)
    out: list[tuple[EnginePin, CheckOptions | None]] = []
    for pin in pins:
        source = flags.source or pin.source or pin.package
        series = flags.series or pin.series
        if source and series:
            (opts,) = ws.engine_plan(replace(flags, engine=pin.key or pin.name), require_exact=True)
            out.append((pin, opts))
        else:
            out.append((pin, None))
    return out


def _engine_section(
    ws: Workspace, pin: EnginePin, opts: CheckOptions | None, flags: EngineFlags, progress: ProgressFn | None
) -> Section:
    """One engine's Engine patches table and Validation line."""
    previous = previous_pin(ws, pin)
    if opts is not None:
        check = checked(ws, opts, progress)
        return engine_of_check(check, pin.repo, previous), check
    series = flags.series or pin.series
    if series is not None:
        strip = pin.strip if flags.strip is None else flags.strip
        table = engine_from_series(ws, series, strip=strip, pin=pin)
        return table, Skipped(f"No {pin.name} source was given (--source): the patch stack was not applied.")
    why = f"No {pin.name} source or series was given: "
    return Skipped(why + "no patch table."), Skipped(why + "the stack was not checked.")


def engine_from_series(ws: Workspace, series: Path, *, strip: int, pin: EnginePin) -> EnginePatches:
    """The Engine patches table from the series file and each patch's DEP-3 header, without a
    source to apply to (so nothing is verified: the Validation section says so)."""
    from vimesync.patches.diffparse import parse_patch
    from vimesync.patches.series import load_series, read_patch

    rows = []
    for entry in load_series(series, default_strip=strip, reader=ws.reader).entries:
        patch = parse_patch(read_patch(entry, reader=ws.reader), name=entry.name, strip=entry.strip)
        rows.append((entry.name, patch.dep3))
    table = build_engine(
        rows,
        engine=engine_name(pin.name, pin.source),
        pin=pin.rev,
        source=str(series),
        engine_repo=pin.repo,
        previous_pin=previous_pin(ws, pin),
    )
    return replace(table, series=str(series))


def mark_uncommitted(ws: Workspace, table: EnginePatches | Skipped) -> EnginePatches | Skipped:
    """Rows whose patch header in the work tree is not the head's (``vimesync patches describe``
    wrote it, nobody committed it yet) marked so: the report reads the head, where the Purpose
    cell would be "—" with no word why. Only when the work tree is at the head."""
    from vimesync.errors import VimesyncError
    from vimesync.patches.dep3 import parse_dep3
    from vimesync.patches.series import load_series, read_patch
    from vimesync.readers import WORKTREE, CommitReader

    if isinstance(table, Skipped) or table.series is None or not isinstance(ws.reader, CommitReader):
        return table
    try:
        if ws.downstream is None or git.resolve(ws.downstream, "HEAD") != ws.head:
            return table
        entries = load_series(Path(table.series), reader=ws.reader).entries
    except (VimesyncError, git.GitError):
        return table
    pending = set()
    for entry in entries:
        try:
            committed, here = read_patch(entry, reader=ws.reader), read_patch(entry, reader=WORKTREE)
        except VimesyncError:  # gone, a symlink, too large in the work tree: nothing to say
            continue
        written = parse_dep3(here) if here != committed else None
        if written is not None and written != parse_dep3(committed):
            pending.add(entry.name)
    rows = tuple(replace(r, header_uncommitted=r.name in pending) for r in table.rows)
    return replace(table, rows=rows) if pending else table


def mark_against_baseline(ws: Workspace, table: EnginePatches | Skipped) -> EnginePatches | Skipped:
    """An Engine patches table marked against the baseline's series (see report.seriesdiff)."""
    from vimesync.report.seriesdiff import mark_series

    if isinstance(table, Skipped) or table.series is None or ws.downstream is None or ws.baseline is None:
        return table
    assert ws.head is not None
    rel = pin_relpath(Path(table.series), ws.config.file, ws.downstream)
    # The strip of a series line without -pN: its engine pin's.
    pins = ws.config.engines
    strip = next((p.strip for p in pins if str(p.series) == table.series), ws.config.engine.strip)
    return table if rel is None else mark_series(table, ws.downstream, ws.baseline, ws.head, rel, strip=strip)


# --- the audit ----------------------------------------------------------------------------------


def audit(ws: Workspace) -> AuditResult:
    """Every path changed between the baseline and the head, classified against the upstream tip
    (translated as carry translates it) and checked against the review ledger; the config's files
    named relative to the downstream, as a PR description says them (``vimesync.toml:9``). Once
    per workspace: the audit step of a sync, its status and its report share it."""
    return ws.once("audit", lambda: _audit(ws))


def _audit(ws: Workspace) -> AuditResult:
    from vimesync.app.resolved import resolved_paths
    from vimesync.audit.run import AuditInputs, load_excluded_globs, run_audit
    from vimesync.audit.verify import load_verify
    from vimesync.upstream.translate import load_transform

    downstream, cfg = ws.require_downstream(), ws.config
    assert ws.head is not None
    # as the user named them (the messages say --baseline main), else the commits resolved
    inputs = AuditInputs(
        downstream=downstream,
        baseline=ws.flags.baseline or ws.require_baseline(),
        head=ws.flags.head or ws.head,
        upstream=ws.require_upstream(),
        upstream_tip=ws.upstream_range.tip,
        upstream_base=ws.upstream_base,
        sync=ws.sync_name,
        path_map=ws.path_map,
        excluded_globs=load_excluded_globs(ws.policy, ws.reader),
        transform=load_transform(cfg, path_map=ws.path_map),
        verify=tuple(load_verify(cfg)),
        upstream_pin=pin_relpath(cfg.upstream_pin.file, cfg.file, downstream),
        bookkeeping=ws.bookkeeping,
        # the paths a maintainer resolved during the carry: each needs a review
        resolved=resolved_paths(ws),
    )
    return run_audit(inputs).relative_to(downstream)


def own_changes(ws: Workspace) -> OwnChanges | Skipped:
    """The commits of the sync branch that carry did not make (the pin bump is told by its pin)."""
    from vimesync.audit.owncommits import own_commits

    if ws.downstream is None or ws.baseline is None or ws.head is None:
        return Skipped("No downstream baseline was given: the sync's own commits are unknown.")
    pin_path = pin_relpath(ws.config.upstream_pin.file, ws.config.file, ws.downstream)
    try:
        return own_commits(ws.downstream, ws.baseline, ws.head, pin_path=pin_path, where=ws.bookkeeping)
    except git.GitError as exc:
        return Skipped(f"The sync's own commits could not be read: {exc.message}")


# --- exact-head CI ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CiTarget:
    """Where the head's CI is read: ``repo`` (owner/name), optionally the PR whose head it must be
    (its earlier commits' results are listed as not evidence), and the contexts required."""

    repo: str
    pr: int | None = None
    required: tuple[str, ...] = ()


def ci_target(
    ws: Workspace, flags: CiFlags, publish: str | None, required: tuple[str, ...]
) -> CiTarget | None:
    """--ci-repo, else the --publish target's repo (whose PR is then the one whose head the report
    must be), else [ci] repo (see ``choose_repo``); None when none."""
    from vimesync.ci.evidence import choose_repo

    repo, pr = flags.repo, flags.pr
    if publish is not None and (repo is None or pr is None):
        from vimesync.report.publish import parse_target

        target_repo, number = parse_target(publish)
        repo, pr = repo or target_repo, pr or number
    job = ws.settings.job_repository
    repo = choose_repo(repo, ws.config.ci_repo, untrusted=ws.untrusted, job=job, what="--ci-repo")
    return None if repo is None else CiTarget(repo=repo, pr=pr, required=required)


def ci_evidence(ws: Workspace, target: CiTarget | None) -> CiEvidence | Skipped:
    """The exact-head CI of the head, or why it was not checked (never an error: an unreadable
    GitHub leaves the gate not checked, which fails the report all the same)."""
    from vimesync.ci.evidence import read_evidence
    from vimesync.github import GitHubClient

    if target is None:
        return Skipped(CI_NOT_ASKED)
    if ws.downstream is None or ws.head is None:
        return Skipped("No downstream repository was given: the head is unknown, CI not checked.")
    if ws.settings.github.token is None:
        return Skipped("No GitHub token in the environment (GITHUB_TOKEN or GH_TOKEN): CI not checked.")
    try:
        client = GitHubClient(target.repo, ws.settings.github)
        try:
            return read_evidence(client, sha=ws.head, pr=target.pr, required=target.required)
        finally:
            client.close()
    except (GitHubError, BadInput) as exc:
        return Skipped(f"CI not checked: {exc.message}")
