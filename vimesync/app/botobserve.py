"""What one bot run reads before it plans: the upstream pin and tip, the walk between them, the
issues and PRs of the bot's label (one listing: its PRs open and closed, its dashboard), its open
PR's head (one GET) and the state its description keeps; with no PR open, where ``sync/<tip8>``
is on the remote; and what is pending of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vimesync import git
from vimesync.app import upstreamsteps
from vimesync.app.workspace import Workspace
from vimesync.bot.model import BRANCH_PREFIX, LABEL, BotMark, Declined, Observed, PendingPR
from vimesync.bot.text import read_mark
from vimesync.carry.gitops import main_repository
from vimesync.errors import BadInput, GitHubError
from vimesync.github import GitHubClient, LabelledItem, OpenPull
from vimesync.upstream.model import APPLICABLE, EXCLUDED, WalkResult


@dataclass
class Seen:
    """What the run read, kept for the steps after the plan."""

    observed: Observed
    walk: WalkResult | None
    items: list[LabelledItem] = field(default_factory=list)  # the run's one listing
    stopped: str | None = None  # where the PR's last sync stopped (its state line)
    unlabelled: bool = False  # the open PR was found by its branch: it lacks the bot's label
    blind: BadInput | None = None  # the upstream could not be observed (the walk before the listing)


def observe(ws: Workspace, client: GitHubClient, base: str, remote: str) -> Seen:
    """The upstream tip, the pin, the walk between them, the bot's open PR (one listing, one GET);
    with none open, its PR for this tip closed unmerged, or else where ``sync/<tip8>`` is."""
    try:
        pin, tip, walk = _upstream(ws)
    except BadInput as exc:  # the dashboard says the run could not observe, if the listing can be made
        try:
            items = client.labelled(LABEL)
            pull, mark, stopped = _bot_pull(client, items, base)
        except GitHubError:
            raise exc from None
        return Seen(Observed(base, "", "", pull, mark), None, items, stopped, blind=exc)
    items = client.labelled(LABEL)
    marks = [(i, m[0]) for i in items if i.is_pull and (m := read_mark(i.body)) is not None]
    pull, mark, stopped = _bot_pull(client, items, base)
    declined, branch_at = None, None
    if pull is None and pin != tip:
        closed = [i for i, m in marks if not i.open and not i.merged and m.tip == tip]
        if closed:
            declined = Declined(max(i.number for i in closed), tip)
        else:
            checkout, token = main_repository(ws.require_downstream()), ws.settings.github.token
            branch_at = git.remote_head(checkout, remote, f"{BRANCH_PREFIX}{tip[:8]}", token=token)
    pushed = frozenset(m.pushed for i, m in marks if not i.open)
    unlabelled = False
    if branch_at is not None and branch_at not in pushed:  # a PR the listing lacks (its label refused)?
        pull, mark, stopped = _unlabelled_pull(client, f"{BRANCH_PREFIX}{tip[:8]}", base)
        unlabelled, branch_at = pull is not None, None if pull is not None else branch_at
    is_sync = False
    if branch_at is not None:  # the maintainers' sync of this tip: beyond the default branch, carrying PRs
        checkout = ws.require_downstream()
        at_base = git.resolve(checkout, base)
        is_sync = (
            branch_at != at_base
            and git.is_ancestor(checkout, at_base, branch_at)
            and bool(carried_on(checkout, at_base, branch_at, upstreamsteps.upstream_repo(ws)))
        )
    observed = Observed(
        base=base,
        pin=pin,
        tip=tip,
        pull=pull,
        mark=mark,
        declined=declined,
        branch_at=branch_at,
        # closed PRs only: an open PR's branch is in use (another base's bot may have it open)
        bot_pushed=pushed,
        branch_is_sync=is_sync,
    )
    return Seen(observed, walk, items, stopped, unlabelled=unlabelled)


def _unlabelled_pull(
    client: GitHubClient, branch: str, base: str
) -> tuple[OpenPull | None, BotMark | None, str | None]:
    """The open PR of ``branch`` into ``base`` whose description holds the bot's state line: one
    the bot opened when adding its label was refused (the listing, by label, lacks it)."""
    pull = client.pull_of_branch(branch)
    found = read_mark(pull.body) if pull is not None and pull.base_ref == base else None
    if pull is None or found is None:
        return None, None, None
    return pull, found[0], found[1]


def _upstream(ws: Workspace) -> tuple[str, str, WalkResult | None]:
    """The upstream pin and tip, and the walk between them (None: nothing between)."""
    upstream = ws.require_upstream()
    rng = ws.upstream_range
    if rng.base is None:
        raise BadInput("the default branch has no upstream pin: nothing to sync from", hint="vimesync init")
    pin, tip = git.resolve(upstream, rng.base), git.resolve(upstream, rng.tip)
    return pin, tip, upstreamsteps.walk(ws) if pin != tip else None


def _bot_pull(
    client: GitHubClient, items: list[LabelledItem], base: str
) -> tuple[OpenPull | None, BotMark | None, str | None]:
    """The bot's PR: open, with the bot's state in its body (as listed), into ``base`` from a
    ``sync/`` branch (as its GET says); the newest such."""
    for item in sorted(items, key=lambda i: -i.number):
        found = read_mark(item.body) if item.is_pull and item.open else None
        if found is None:
            continue
        pull = client.open_pull(item.number)
        if pull is None or pull.base_ref != base or not pull.head_ref.startswith(BRANCH_PREFIX):
            continue
        found = read_mark(pull.body)  # as the GET has it (the listing may be a moment older)
        if found is not None:
            return pull, found[0], found[1]
    return None, None, None


def pending_prs(
    upstream: Path, walk: WalkResult | None, since: str | None, carried: frozenset[int] = frozenset()
) -> list[PendingPR]:
    """The applicable upstream PRs not in ``since`` (the upstream tip the sync PR holds) nor
    ``carried`` (brought onto the PR's branch since, by a maintainer)."""
    if walk is None:
        return []
    out = []
    for pr in walk.by_status(APPLICABLE):
        if pr.number in carried or (since is not None and git.is_ancestor(upstream, pr.merge_commit, since)):
            continue
        out.append(PendingPR(pr.number, pr.title))
    return out


MAX_BRANCH_COMMITS = 1000  # of a held PR's branch read for its Upstream-PR trailers


def carried_on(checkout: Path, base: str, head: str, repo: str | None) -> frozenset[int]:
    """The upstream PRs that ``head`` (a held PR's branch) carries past ``base``, by its commits'
    ``Upstream-PR: <repo>#N`` trailers as git parses them (the carry writes them); none when the
    head is not in this checkout (a shallow one: the PR then lists them as pending)."""
    if not git.run_ok(checkout, ["cat-file", "-e", f"{head}^{{commit}}"]):
        return frozenset()
    fmt = "--format=%(trailers:key=Upstream-PR,valueonly,separator=%x00)%x00"
    out = git.run(checkout, ["log", f"--max-count={MAX_BRANCH_COMMITS}", fmt, f"{base}..{head}", "--"])
    found = set()
    for value in out.decode("utf-8", "replace").split("\0"):
        name, hash_, number = value.strip().rpartition("#")
        if (
            hash_
            and number.isdigit()
            and len(number) < 10
            and (not name or name.lower() == (repo or "").lower())
        ):
            found.add(int(number))
    return frozenset(found)


def excluded_prs(walk: WalkResult | None) -> list[PendingPR]:
    if walk is None:
        return []
    return [
        PendingPR(p.number, p.title, p.decision.reason if p.decision else "")
        for p in walk.by_status(EXCLUDED)
    ]
