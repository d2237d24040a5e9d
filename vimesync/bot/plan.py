"""The plan of one bot run, from what it observed: pure (the issue's cases 2, 3 and 4)."""

from __future__ import annotations

from vimesync.bot.model import BRANCH_PREFIX, BotCase, BotPlan, Observed


def plan(seen: Observed) -> BotPlan:
    """The one thing this run does.

    - no bot PR: nothing pending is the dashboard only; the bot's PR for this very tip closed
      unmerged is the maintainers' no (the dashboard says so, a new PR comes when upstream
      moves); else sync into ``sync/<tip8>`` and push it as a new branch (the lease: it must not
      exist yet), or over that branch when it is where one of the bot's state lines says the
      bot pushed it (the lease: that sha); a branch of that name the bot cannot vouch for is
      left alone, and the dashboard says so, unless it holds the default branch (a maintainer's
      sync pushed after the bot's stopped with nothing to push: its commits carry upstream PRs):
      then its PR is opened, held;
    - a bot PR whose branch is where the bot last pushed it (its mark): when upstream moved, sync
      again from the default branch and push with a lease on that sha; else nothing to sync;
    - a bot PR whose branch moved since (a maintainer's resolution or fix): never pushed to.
    """
    pull, mark = seen.pull, seen.mark
    if pull is None:
        if seen.tip == seen.pin:
            return BotPlan(BotCase.UP_TO_DATE, why="the default branch holds the upstream tip")
        branch = f"{BRANCH_PREFIX}{seen.tip[:8]}"
        if seen.declined is not None:
            n = seen.declined.number
            why = f"#{n} for upstream {seen.tip[:8]} was closed unmerged: that tip is not pushed again"
            return BotPlan(BotCase.DECLINED, branch=branch, pull=n, why=why)
        if seen.branch_at is None:
            return BotPlan(BotCase.OPEN, branch=branch, lease="", why="no sync PR is open")
        if seen.branch_at in seen.bot_pushed:
            why = f"no sync PR is open; {branch} is where the bot last pushed it: replaced with a lease"
            return BotPlan(BotCase.OPEN, branch=branch, lease=seen.branch_at, why=why)
        if seen.branch_is_sync:
            why = f"{branch} holds {seen.base} and commits the bot did not push, with no PR: its PR is opened"
            return BotPlan(BotCase.ADOPT, branch=branch, since=seen.tip, why=why)
        why = f"{branch} exists with no sync PR and not as the bot pushed it: left alone"
        return BotPlan(BotCase.STALE_BRANCH, branch=branch, why=why)
    since = mark.tip if mark is not None else None
    if mark is None or pull.head_sha != mark.pushed:
        why = f"#{pull.number}'s branch {pull.head_ref} has commits the bot did not push: never rewritten"
        return BotPlan(BotCase.HOLD, branch=pull.head_ref, pull=pull.number, since=since, why=why)
    if mark.tip == seen.tip:
        return BotPlan(
            BotCase.CURRENT,
            branch=pull.head_ref,
            pull=pull.number,
            since=since,
            why="the PR holds the upstream tip",
        )
    return BotPlan(
        BotCase.FOLLOW,
        branch=pull.head_ref,
        lease=mark.pushed,
        pull=pull.number,
        since=since,
        why=f"upstream moved from {mark.tip[:8]} to {seen.tip[:8]}",
    )
