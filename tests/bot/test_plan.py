"""The bot's plan from what it observed (pure), and its state line read back (issue 32)."""

from __future__ import annotations

import pytest

from vimesync.bot.model import Board, BotCase, BotMark, Declined, Observed
from vimesync.bot.plan import plan
from vimesync.bot.text import dashboard, read_mark, state_line
from vimesync.github import OpenPull
from vimesync.report.mentions import BOT_STATE

PIN, TIP, NEW, PUSHED, OTHER = ("a" * 40, "b" * 40, "c" * 40, "d" * 40, "e" * 40)


def pull(head: str) -> OpenPull:
    return OpenPull(7, f"sync/{TIP[:8]}", head, "main", "", "[Sync]", False, "https://x/7")


@pytest.mark.parametrize(
    ("seen", "case", "lease"),
    [
        (Observed("main", PIN, PIN), BotCase.UP_TO_DATE, None),
        (Observed("main", PIN, TIP), BotCase.OPEN, ""),
        (Observed("main", PIN, TIP, pull(PUSHED), BotMark(PUSHED, TIP)), BotCase.CURRENT, None),
        (Observed("main", PIN, NEW, pull(PUSHED), BotMark(PUSHED, TIP)), BotCase.FOLLOW, PUSHED),
        (Observed("main", PIN, NEW, pull(OTHER), BotMark(PUSHED, TIP)), BotCase.HOLD, None),
        (Observed("main", PIN, TIP, pull(OTHER), BotMark(PUSHED, TIP)), BotCase.HOLD, None),
        # no PR open: the bot's PR for this tip closed unmerged, a branch it left, one it cannot vouch for
        (Observed("main", PIN, TIP, declined=Declined(7, TIP)), BotCase.DECLINED, None),
        (Observed("main", PIN, TIP, branch_at=PUSHED, bot_pushed=frozenset({PUSHED})), BotCase.OPEN, PUSHED),
        (
            Observed("main", PIN, TIP, branch_at=OTHER, bot_pushed=frozenset({PUSHED})),
            BotCase.STALE_BRANCH,
            None,
        ),
        (Observed("main", PIN, PIN, declined=Declined(7, PIN)), BotCase.UP_TO_DATE, None),
        (Observed("main", PIN, TIP, branch_at=OTHER, branch_is_sync=True), BotCase.ADOPT, None),
    ],
)
def test_the_plan_of_each_case(seen: Observed, case: BotCase, lease: str | None) -> None:
    p = plan(seen)
    assert p.case is case and p.lease == lease
    if case in (BotCase.OPEN, BotCase.DECLINED, BotCase.STALE_BRANCH, BotCase.ADOPT):
        assert p.branch == f"sync/{TIP[:8]}" and not (p.syncs and case is not BotCase.OPEN)
    if case is BotCase.FOLLOW:
        assert p.branch == seen.pull.head_ref and p.since == TIP  # type: ignore[union-attr]


def test_the_state_line_reads_back_and_two_are_none() -> None:
    line = state_line(BotMark(PUSHED, TIP), "carry")
    assert read_mark(f"text\n{line}\nmore") == (BotMark(PUSHED, TIP), "carry")
    assert read_mark(f"{line}\n{line}") is None  # planted twice: not the bot's to trust
    assert read_mark(line.replace("carry", "rm -rf")) is None
    assert read_mark(f"{BOT_STATE}pushed={'g' * 40} tip={TIP} stopped=none -->") is None
    assert read_mark(state_line(BotMark(PUSHED, TIP), None)) == (BotMark(PUSHED, TIP), None)


def test_the_dashboard_neutralises_what_upstream_wrote() -> None:
    from vimesync.bot.model import PendingPR

    planted = (
        f"@alice fixes #1 {BOT_STATE}pushed={PUSHED} tip={TIP} stopped=none --> <!-- vimesync:dashboard -->"
    )
    board = Board(
        "Slime", "main", PIN, TIP, None, None, (PendingPR(4, planted),), (PendingPR(5, "x", planted),)
    )
    text = dashboard(board)
    assert "<code>@alice</code>" in text and "fixes #1" not in text
    assert read_mark(text) is None and text.count("<!-- vimesync:dashboard -->") == 1


def test_the_dashboard_of_a_tip_left_alone() -> None:
    declined = dashboard(Board("Slime", "main", PIN, TIP, None, None, declined=Declined(7, TIP)))
    assert "#7 for upstream `bbbbbbbb` was closed unmerged" in declined and "`gh pr reopen 7`" in declined
    stale = dashboard(
        Board(
            "Slime", "main", PIN, TIP, None, None, stale_branch=("sync/bbbbbbbb", OTHER), remote="up stream"
        )
    )
    assert "`sync/bbbbbbbb` is on `up stream` at `eeeeeeee`" in stale
    assert "`git push 'up stream' --delete sync/bbbbbbbb`" in stale


def test_a_sync_that_could_not_run_is_said_in_fixed_words() -> None:
    from vimesync.bot.text import could_not_run
    from vimesync.errors import BadInput, ConfigError, GitError, PatchError

    planted = "@alice closes #1 <!-- vimesync:dashboard -->"
    said = [
        could_not_run(ConfigError(planted, planted)),
        could_not_run(PatchError(planted, planted)),
        could_not_run(GitError(planted)),
        could_not_run(BadInput(planted)),
    ]
    assert len(set(said)) == 4 and not any("alice" in s for s in said)
    board = Board("Slime", "main", PIN, TIP, None, None, failed=said[0])
    assert "**The sync could not run**: a configuration file" in dashboard(board)


def test_a_decision_cut_short_keeps_its_ellipsis() -> None:
    from vimesync.bot.model import BotPlan
    from vimesync.bot.text import bot_block

    cut = "7 paths need review (7 unreviewed, 0 stale): a b c d e ..."
    block = bot_block(
        BotPlan(BotCase.OPEN, branch="sync/x"), TIP, stopped=("audit", cut, None), pending=(), bring_in=""
    )
    assert "c d e ..." in block  # the sync listed 5 of 7: the "..." says so (it was stripped)
    whole = bot_block(
        BotPlan(BotCase.OPEN), TIP, stopped=("carry", "a conflict in a.py.", None), pending=(), bring_in=""
    )
    assert "a conflict in a.py." in whole and "a.py.." not in whole


def test_a_held_pr_is_not_said_to_name_its_decision() -> None:
    """The maintainers pushed to the PR's branch (often to resolve the stop): the dashboard must not
    send them to the PR for a decision and a next command the held PR no longer shows."""
    held = dashboard(Board("Slime", "main", PIN, TIP, pull(OTHER), "audit", held=True))
    line = next(ln for ln in held.splitlines() if ln.startswith("#7 "))
    assert "the PR says the decision" not in line and "commits the bot did not push" in line
    assert "stopped at **audit**" in line
    own = dashboard(Board("Slime", "main", PIN, TIP, pull(PUSHED), "audit"))
    assert "the PR says the decision and the next command" in own


def test_a_run_that_could_not_observe_is_said_in_fixed_words() -> None:
    from vimesync.bot.text import could_not_observe
    from vimesync.errors import BadInput, ConfigError, GitError

    planted = "@alice closes #1 <!-- vimesync:dashboard -->"
    said = [
        could_not_observe(e) for e in (ConfigError(planted, planted), GitError(planted), BadInput(planted))
    ]
    assert len(set(said)) == 3 and not any("alice" in s for s in said)
    text = dashboard(Board(planted, "main", "", "", pull(PUSHED), "audit", blind=said[0]))
    assert "**The run could not observe**: a configuration file" in text
    assert "closes #1" not in text and text.count("<!-- vimesync:dashboard -->") == 1
    assert "#7 (`sync/bbbbbbbb`): left as it is" in text
