"""The side effects of one bot run, in order: the sync (``vimesync sync``'s use case, in a
worktree under a scratch folder, removed again with ``sync --abort``), the push with its lease,
the sync PR, the dashboard. A GitHub write is sent only when its text differs from what was read."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.app import upstreamsteps
from vimesync.app.botobserve import Seen, carried_on, excluded_prs, pending_prs
from vimesync.app.botresult import BotResult
from vimesync.app.flags import OutputFlags
from vimesync.app.syncresult import SyncMode, SyncResult, SyncRunRequest
from vimesync.app.syncsteps import sh
from vimesync.app.workspace import Workspace
from vimesync.audit.ledger import LEDGER_DIR
from vimesync.audit.syncname import default_sync_name
from vimesync.bot import text
from vimesync.bot.model import (
    DASHBOARD_LABEL,
    LABEL,
    Board,
    BotCase,
    BotMark,
    BotPlan,
    Observed,
    PendingPR,
    SyncOutcome,
)
from vimesync.carry import gitops
from vimesync.carry.run import CarryOptions
from vimesync.errors import BadInput, GitError, GitHubError
from vimesync.github import GitHubClient, OpenPull
from vimesync.report.mentions import DASHBOARD
from vimesync.report.publish import pr_title


@dataclass(frozen=True)
class Synced:
    """What this run's sync left for the PR: the state to keep, the stop, the report, the pending PRs."""

    mark: BotMark
    stopped: str | None
    outcome: SyncOutcome | None
    report: str | None
    pending: tuple[PendingPR, ...]


def perform(ws: Workspace, client: GitHubClient, remote: str, seen: Seen, plan: BotPlan) -> BotResult:
    o = seen.observed
    checkout = gitops.main_repository(ws.require_downstream())
    writes: list[str] = []
    outcome, report, pushed = None, None, None
    mark, stopped, pull = o.mark, seen.stopped, o.pull
    failed: BadInput | None = None  # the sync could not run: the dashboard says so, then exit 2
    if plan.syncs:
        assert plan.branch is not None and plan.lease is not None
        try:
            outcome, report = run_sync(ws, checkout, o.base, plan.branch)
        except BadInput as exc:  # a config, pin, records file or input the sync refused
            failed = exc
        if outcome is not None and outcome.head is not None:
            done = git.push(
                checkout, remote, outcome.head, plan.branch, lease=plan.lease, token=ws.settings.github.token
            )
            pushed = done.status
            if pushed == "lease refused":
                return BotResult(o, plan, outcome, pushed, notes=(_refused(plan, remote),))
            mark, stopped = BotMark(outcome.head, o.tip), outcome.stopped
    if plan.case is BotCase.ADOPT:  # the bot pushed nothing there: its state line names the default branch
        mark = BotMark(git.resolve(checkout, o.base), o.tip)
    pending = _pending(ws, checkout, seen, plan, (pull, mark, stopped), pushed)
    # the report's own title, as report --publish sets it ("partly: K of N ..." when PRs are missing)
    fallback = f"[Sync] {upstreamsteps.upstream_name(ws)} through {o.tip[:8]}"
    title = pr_title(outcome.title if outcome is not None and outcome.title else fallback)
    if mark is not None and failed is None and (plan.syncs or plan.case in (BotCase.HOLD, BotCase.ADOPT)):
        done_now = Synced(mark, stopped, outcome, report, tuple(pending))
        try:
            pull = _write_pull(client, plan, pull, o, done_now, title, writes)
        except GitHubError:
            opened = any(w.startswith("opened #") for w in writes)  # then its branch is the PR's
            if plan.case is BotCase.OPEN and plan.lease == "" and pushed == "pushed" and not opened:
                _undo_push(ws, checkout, remote, plan, mark.pushed)
            raise
    if seen.unlabelled and pull is not None:  # found by its branch: an earlier run's label was refused
        client.add_labels(pull.number, [LABEL])
        writes.append(f"labelled #{pull.number} {LABEL}")
    if plan.case is BotCase.FOLLOW and pushed and pull is not None:
        _set_draft(client, pull, outcome is not None and outcome.stopped is not None, writes)
    unpushed = None
    if outcome is not None and outcome.head is None and outcome.stopped is not None:
        unpushed = (outcome.stopped, outcome.decision, outcome.next)
    pr_head = None if pull is None else (mark.pushed if pushed and mark is not None else pull.head_sha)
    held = mark.tip if mark is not None else o.tip
    news = _news(ws, pr_head, default_sync_name(o.pin, held))
    news |= _left(plan, o, remote) | {"failed": None if failed is None else text.could_not_run(failed)}
    news["held"] = plan.case in (BotCase.HOLD, BotCase.ADOPT)
    dash = _write_dashboard(client, ws, seen, pull, (stopped, unpushed), pending, news, writes)
    if failed is not None:
        raise failed  # exit 2, as the sync itself says it; the dashboard already shows it
    return BotResult(o, plan, outcome, pushed, pull.html_url if pull else None, dash, tuple(writes))


def _pending(
    ws: Workspace,
    checkout: Path,
    seen: Seen,
    plan: BotPlan,
    pr: tuple[OpenPull | None, BotMark | None, str | None],  # the PR, its state, where its sync stopped
    pushed: str | None,
) -> list[PendingPR]:
    """The applicable upstream PRs the sync PR does not hold: those after the upstream tip it
    synced; where its head is not the bot's whole sync of that tip (a maintainer's branch, held or
    adopted, or a carry stopped part-way), less what the head's commits carry (their trailers)."""
    o, (pull, mark, stopped) = seen.observed, pr
    since = mark.tip if mark is not None and (pull is not None or pushed) else None
    head = None
    if plan.case is BotCase.HOLD and pull is not None:  # what the maintainer brought in is not pending
        head = pull.head_sha
    elif plan.case is BotCase.ADOPT:  # as the held runs after it will read it: the tip, less the trailers
        head, since = o.branch_at, o.tip
    elif stopped == "carry" and since is not None and mark is not None:
        head = mark.pushed
    if stopped == "carry":
        since = None  # the carry stopped part-way: the head holds what its commits carry, not its tip
    carried = frozenset[int]()
    if head is not None:
        carried = carried_on(checkout, o.base, head, upstreamsteps.upstream_repo(ws))
    return pending_prs(ws.require_upstream(), seen.walk, since, carried)


def _undo_push(ws: Workspace, checkout: Path, remote: str, plan: BotPlan, pushed: str) -> None:
    """The PR could not be opened: the branch this run created goes again (if it is still where
    this run pushed it), so the next run starts clean rather than meet a branch with no PR."""
    assert plan.branch is not None
    try:
        git.unpush(checkout, remote, plan.branch, pushed=pushed, back="", token=ws.settings.github.token)
    except GitError:
        pass  # the GitHub error is the one to report; the next run holds the branch and says so


def _left(plan: BotPlan, o: Observed, remote: str) -> dict[str, Any]:
    """What the dashboard says of a tip the bot leaves alone: its PR closed unmerged, or a
    ``sync/<tip8>`` branch it cannot vouch for."""
    stale = (
        (plan.branch, o.branch_at)
        if plan.case is BotCase.STALE_BRANCH and plan.branch and o.branch_at
        else None
    )
    declined = o.declined if plan.case is BotCase.DECLINED else None
    return {"declined": declined, "stale_branch": stale, "remote": remote}


def _set_draft(client: GitHubClient, pull: OpenPull, draft: bool, writes: list[str]) -> None:
    """The followed PR a draft exactly when its new sync stopped at a decision (GraphQL: REST cannot)."""
    if pull.draft == draft or not pull.node_id:
        return
    client.set_draft(pull.node_id, draft)
    writes.append(f"made #{pull.number} " + ("a draft" if draft else "ready for review"))


def _news(ws: Workspace, pr_head: str | None, sync: str) -> dict[str, Any]:
    """The dashboard's engine patches whose PRs merged and the sync PR's stale records."""
    from vimesync.app.botboard import merged_patches, stale_records

    merged, unchecked = merged_patches(ws)
    stale, unread = stale_records(ws, pr_head, sync)
    return {"merged": merged, "merged_unchecked": unchecked, "stale": stale, "stale_unread": unread}


def _refused(plan: BotPlan, remote: str) -> str:
    return (
        f"the push to {remote} {plan.branch} was refused: the branch is no longer at"
        f" {(plan.lease or 'nothing')[:12]} (someone pushed meanwhile); nothing was written"
    )


def run_sync(ws: Workspace, checkout: Path, base: str, branch: str) -> tuple[SyncOutcome, str | None]:
    """``vimesync sync`` into ``branch`` from ``base``, in a worktree under a scratch folder; what it
    reached (the branch's commit, where it stopped) and its report, read before ``--abort`` removes
    the sync's state, worktree and local branch (the remote holds the branch once pushed)."""
    from vimesync.app.sync import sync
    from vimesync.app.syncabort import abort

    # the upstream as this checkout found it: a relative [upstream] path means nothing in the scratch worktree
    given = ws  # --abort takes no --upstream: the carry in progress has its own
    ws = replace(ws, flags=replace(ws.flags, upstream=ws.require_upstream().absolute()))
    scratch = Path(tempfile.mkdtemp(prefix="vimesync-bot-"))
    worktree, output = scratch / "sync", scratch / "report.md"
    onto = git.resolve(checkout, base)
    carry = CarryOptions(branch=branch, onto=base, worktree=worktree)
    request = SyncRunRequest(mode=SyncMode.START, carry=carry, output=OutputFlags(output=output))
    try:
        result = sync(ws, request)
        assert isinstance(result, SyncResult)
        head = gitops.branch_at(checkout, f"refs/heads/{branch}")
        head = None if head == onto else head  # nothing carried yet: GitHub opens no PR of no commit
        report = output.read_text(encoding="utf-8") if output.is_file() else None
        if report is None and head is not None and result.stopped not in ("walk", "carry"):
            report = report_at(ws, checkout, worktree, head, onto)  # stopped at a gate: the report says which
        title = title_at(ws, checkout, worktree, head, onto) if head is not None else None
        return replace(_outcome(result, head, base, branch, worktree), title=title), report
    finally:
        from vimesync.app import syncstate

        if syncstate.exists(checkout):
            abort(given, checkout)
        shutil.rmtree(scratch, ignore_errors=True)


def _at_head(ws: Workspace, checkout: Path, worktree: Path, head: str, baseline: str) -> Workspace:
    """The sync's head read as ``report`` reads it (its config as the head has it)."""
    from vimesync.app.flags import SyncFlags

    config = ws.checkout.file
    if config is not None and Path(config).absolute().is_relative_to(checkout):
        config = worktree / Path(config).absolute().relative_to(checkout)
    flags = SyncFlags(
        config=config, upstream=ws.flags.upstream, downstream=worktree, head=head, baseline=baseline
    )
    return Workspace.resolve(flags, ws.settings, reading="head", cwd=worktree)


def report_at(ws: Workspace, checkout: Path, worktree: Path, head: str, baseline: str) -> str:
    """The report of the sync's head as ``report --publish`` makes it."""
    from vimesync.app.report import ReportRequest, make_report
    from vimesync.report.markdown import render_markdown

    with _at_head(ws, checkout, worktree, head, baseline) as at_head:
        return render_markdown(make_report(at_head, ReportRequest()).report)


def title_at(ws: Workspace, checkout: Path, worktree: Path, head: str, baseline: str) -> str | None:
    """The title ``report --publish`` gives the sync PR (:attr:`SyncReport.title`): it is made of
    the Summary alone (the walk and what the head carries), so only that part is built. None when
    the head cannot be read so (a sync stopped early): the PR keeps the bot's own title."""
    from vimesync.errors import VimesyncError
    from vimesync.report.build import ReportParts, build_report

    try:
        with _at_head(ws, checkout, worktree, head, baseline) as at_head:
            walked = upstreamsteps.walked(at_head)
            parts = ReportParts(
                walk=walked,
                upstream_name=upstreamsteps.upstream_name(at_head),
                upstream_repo=upstreamsteps.upstream_repo(at_head),
                carried=upstreamsteps.carried_at_head(at_head, walked),
            )
            return build_report(parts).title
    except VimesyncError:
        return None


def _outcome(result: SyncResult, head: str | None, base: str, branch: str, worktree: Path) -> SyncOutcome:
    """The sync's stop as a maintainer meets it: the bot's scratch worktree is theirs to make again."""

    def theirs(words: str | None) -> str | None:
        return None if words is None else words.replace(str(worktree), "<the sync's worktree>")

    next_ = None
    if result.stopped is not None:
        # the review ledger the audit's decision writes is pushed with the branch, or the PR's
        # head is not what was reviewed (a commit of only ledgers keeps the evidence head)
        ledger = ""
        if result.stopped == "audit":
            add, commit = sh("git", "add", LEDGER_DIR), sh("git", "commit", "-m", "Record the audit reviews")
            ledger = f"; then in <the sync's worktree>: {add} && {commit}"
        next_ = (
            f"in a checkout of {base}: {sh('vimesync', 'sync', '--branch', branch)}, then"
            f" {theirs(result.next) or 'decide as it says'}{ledger}; then"
            f" {sh('git', 'push', '--force-with-lease', 'origin', branch)}"
        )
    steps = tuple((s.name, s.ok, s.figure) for s in result.steps)
    return SyncOutcome(head, result.stopped, theirs(result.decision), next_, steps)


def _write_pull(
    client: GitHubClient,
    plan: BotPlan,
    pull: OpenPull | None,
    o: Observed,
    done: Synced,
    title: str,
    writes: list[str],
) -> OpenPull | None:
    """Open the sync PR, or edit it when its description (or title) would change."""
    mark, stopped, outcome, report, pending = done.mark, done.stopped, done.outcome, done.report, done.pending
    stop = (outcome.stopped, outcome.decision, outcome.next) if outcome and outcome.stopped else None
    assert plan.branch is not None
    # in a clone of the fork: the PR's branch as the remote has it, the pending PRs carried onto it
    # in a branch of their own, then the PR's branch fast-forwarded to it (by them: never the bot)
    prs, ahead = [a for p in pending for a in ("--pr", str(p.number))], f"{plan.branch}-pending"
    bring = (
        f"{sh('git', 'fetch', 'origin', plan.branch)}, then"
        f" {sh('vimesync', 'carry', '--onto', f'origin/{plan.branch}', '--branch', ahead, *prs)}, then"
        f" {sh('git', 'push', 'origin', f'{ahead}:{plan.branch}')}"
    )
    base, tip = o.base, o.tip
    block = text.bot_block(plan, tip, stopped=stop, pending=pending, bring_in=bring)
    state = text.state_line(mark, stopped)
    if plan.case in (BotCase.OPEN, BotCase.ADOPT):
        body = text.pull_body("", block, state, report)
        number, url = client.create_pull(
            head=plan.branch, base=base, title=title, body=body, draft=stop is not None
        )
        writes.append(f"opened #{number}" + (" (a draft)" if stop else ""))  # it stays, labelled or not
        client.add_labels(number, [LABEL])  # refused: the next run finds the PR by its branch
        writes.append(f"labelled #{number} {LABEL}")
        head = o.branch_at if plan.case is BotCase.ADOPT and o.branch_at else mark.pushed
        return OpenPull(number, plan.branch, head, base, body, title, stop is not None, url, (LABEL,))
    assert pull is not None
    body = text.pull_body(pull.body, block, state, report)
    new_title = title if plan.case is BotCase.FOLLOW and title != pull.title else None
    if body != pull.body or new_title is not None:
        client.set_pull_body(pull.number, body, title=new_title)
        writes.append(f"edited #{pull.number}")
    return pull


def _write_dashboard(
    client: GitHubClient,
    ws: Workspace,
    seen: Seen,
    pull: OpenPull | None,
    stop: tuple[str | None, tuple[str, str | None, str | None] | None],  # the PR's, or one with no commit
    pending: list[PendingPR],
    news: dict[str, Any],
    writes: list[str],
) -> str | None:
    o = seen.observed
    stopped, unpushed = stop
    board = Board(
        upstream=upstreamsteps.upstream_name(ws),
        base=o.base,
        pin=o.pin,
        tip=o.tip,
        pull=pull,
        stopped=stopped if pull is not None else None,
        pending=tuple(pending),
        excluded=tuple(excluded_prs(seen.walk)),
        unpushed=unpushed,
        **news,
    )
    return _put_dashboard(client, seen, text.dashboard(board), writes)


def report_blind(ws: Workspace, client: GitHubClient, seen: Seen, error: BadInput) -> None:
    """The run could not observe the upstream: the dashboard says so (fixed words), and shows the
    sync PR as the listing has it; nothing else is written."""
    o = seen.observed
    try:
        name = upstreamsteps.upstream_name(ws)
    except BadInput:
        name = "The upstream"
    board = Board(
        upstream=name,
        base=o.base,
        pin="",
        tip="",
        pull=o.pull,
        stopped=seen.stopped,
        blind=text.could_not_observe(error),
    )
    _put_dashboard(client, seen, text.dashboard(board), [])


def _put_dashboard(client: GitHubClient, seen: Seen, body: str, writes: list[str]) -> str | None:
    """Open the dashboard, or edit it when its text changed; its address."""
    found = [
        i
        for i in seen.items
        if not i.is_pull and i.open and DASHBOARD_LABEL in i.labels and i.body.startswith(DASHBOARD)
    ]
    if not found:
        # both labels: the run's one listing (by the bot's label) finds it with the bot's PRs
        number, url = client.create_issue(title=text.TITLE, body=body, labels=[LABEL, DASHBOARD_LABEL])
        writes.append(f"opened the dashboard #{number}")
        return url
    issue = min(found, key=lambda i: i.number)  # the oldest: the one the bot made first
    if issue.body != body:
        client.set_issue_body(issue.number, body)
        writes.append(f"edited the dashboard #{issue.number}")
    return issue.html_url
