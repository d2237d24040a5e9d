"""A sync PR the maintainers closed unmerged, a ``sync/<tip8>`` branch with no PR, and the run's
one listing (issue 32): a closed PR for the upstream tip is the maintainers' no, so the bot neither
reopens it nor pushes that tip again (exit 0, the dashboard says so, a second run writes nothing)
until upstream moves; a branch of that name is pushed over only when one of the bot's state lines
says the bot left it there, and held otherwise."""

from __future__ import annotations

import pytest

from tests.builders.botrun import bot, maintainer_push
from tests.builders.fakefork import FakeFork
from tests.builders.pair import Pair, cli
from vimesync.report.mentions import BOT_STATE

pytestmark = pytest.mark.slow  # real syncs in real repositories


def runs_listed(fake: FakeFork, before: int) -> list[str]:
    """The listing GETs made since ``before``: each the issues of the bot's label, open and closed."""
    made = fake.listings[before:]
    assert all(q.get("labels") == ["vimesync-sync"] and q.get("state") == ["all"] for _, q in made)
    return [path for path, _ in made]


def test_a_pr_closed_unmerged_is_not_pushed_again_until_upstream_moves(fork, capsys) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    branch, first = doc["branch"], fake.open_pull()
    head = fake.head_of(branch)
    fake.close(first["number"])
    # the tip has not moved: the maintainers said no to it
    listed = len(fake.listings)
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "declined" and doc["pushed"] is None and doc["sync"] is None
    assert fake.head_of(branch) == head and fake.pulls[first["number"]]["state"] == "closed"
    assert runs_listed(fake, listed) == ["/issues"]
    dash = fake.dashboard()["body"]
    assert f"#{first['number']} for upstream `{pair.tip[:8]}` was closed unmerged" in dash
    assert "A new PR comes when upstream moves." in dash
    assert f"gh pr reopen {first['number']}" in dash
    assert [w[0] for w in fake.writes[writes:]] == ["PATCH"]  # the dashboard, nothing else
    # a second run: nothing new, no write
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "declined" and doc["writes"] == [] and len(fake.writes) == writes
    # upstream moves: a new PR on a new branch
    pair.up.commit("Add e (#4)", {"slime/e.py": "from slime import x\n"})
    tip2 = pair.up.head()
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "open" and doc["branch"] == f"sync/{tip2[:8]}" and doc["pushed"] == "pushed"
    again = fake.open_pull()
    assert again["number"] != first["number"] and again["head"] == f"sync/{tip2[:8]}"
    assert f"tip={tip2}" in again["body"] and fake.head_of(branch) == head  # the old branch untouched
    assert (
        f"#{again['number']}" in fake.dashboard()["body"]
        and "closed unmerged" not in fake.dashboard()["body"]
    )


def test_a_reopened_pr_is_the_bots_again(fork, capsys) -> None:
    """The force the dashboard names: reopen the PR, and the bot keeps it current."""
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    n = fake.open_pull()["number"]
    fake.close(n)
    bot(capsys, pair)
    fake.pulls[n]["state"] = "open"
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "current", err
    assert f"#{n} (`{doc['branch']}`)" in fake.dashboard()["body"]


def stale_branch(pair: Pair, fake: FakeFork) -> str:
    """``sync/<tip8>`` on the remote with no PR: a commit of main's pushed there."""
    branch = f"sync/{pair.tip[:8]}"
    pair.down.commit("someone's own work", {"NOTES.md": "mine\n"})
    maintainer_push(pair.down.path, f"HEAD:refs/heads/{branch}")
    pair.down.git("reset", "-q", "--hard", "HEAD~1")
    return fake.head_of(branch) or ""


def test_a_branch_with_no_pr_the_bot_cannot_vouch_for_is_held(fork, capsys) -> None:
    pair, fake = fork
    sha = stale_branch(pair, fake)
    code, doc, err = bot(capsys, pair)
    assert code == 0, err  # today: the lease on a new branch is refused, exit 1, every run
    assert doc["case"] == "stale-branch" and doc["pushed"] is None and fake.pulls == {}
    assert fake.head_of(doc["branch"]) == sha
    dash = fake.dashboard()["body"]
    assert f"`{doc['branch']}` is on `origin` at `{sha[:8]}`" in dash
    assert f"git push origin --delete {doc['branch']}" in dash
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["writes"] == [] and len(fake.writes) == writes


def test_a_branch_where_the_bots_closed_pr_left_it_is_pushed_over_with_a_lease(fork, capsys) -> None:
    """A PR the bot followed to another tip, then closed: its state line vouches for the branch."""
    pair, fake = fork
    sha = stale_branch(pair, fake)
    state = f"{BOT_STATE}pushed={sha} tip={'9' * 40} stopped=none -->"
    fake.pulls[9] = {
        "number": 9,
        "state": "closed",
        "merged_at": None,
        "title": "[Sync] old",
        "body": f"<!-- vimesync:bot -->\n{state}\n<!-- /vimesync:bot -->\n",
        "draft": False,
        "head": "sync/99999999",
        "base": "main",
        "sha": sha,
        "labels": [{"name": "vimesync-sync"}],
        "html_url": "https://github.com/vime-org/vime/pull/9",
    }
    fake._next = 10
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "open" and doc["lease"] == sha and doc["pushed"] == "pushed"
    assert fake.head_of(doc["branch"]) == doc["sync"]["head"] != sha
    assert fake.open_pull()["head"] == doc["branch"]


def test_each_run_makes_one_listing(fork, capsys) -> None:
    pair, fake = fork
    for step in range(3):  # open, nothing new, follow
        if step == 2:
            pair.up.commit("Add e (#4)", {"slime/e.py": "from slime import x\n"})
        listed = len(fake.listings)
        code, doc, err = bot(capsys, pair)
        assert code == 0, err
        assert runs_listed(fake, listed) == ["/issues"], doc["case"]
    assert doc["case"] == "follow"


def test_a_pr_that_could_not_be_opened_leaves_no_branch_behind(fork, capsys) -> None:
    """The push went through, opening the PR did not: the branch goes again (a lease on what was
    pushed), so the next run opens the PR instead of meeting a branch with no PR."""
    pair, fake = fork
    fake.fail[("POST", "/pulls")] = 422
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and "422" in err and "Traceback" not in err
    branch = f"sync/{pair.tip[:8]}"
    assert fake.head_of(branch) is None and fake.pulls == {}  # today: the branch stays, every run held
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "open" and doc["pushed"] == "pushed", err
    assert fake.open_pull()["head"] == branch


def test_a_pr_whose_label_failed_is_found_again_and_labelled(fork, capsys) -> None:
    """The PR was opened, adding its label was refused: the PR and its branch stay (undoing would
    open a new PR every run while the label keeps failing), the run exits 2, and the next run
    finds the PR by its branch (one GET, only when the branch has no PR the listing knows),
    labels it and keeps it: no second PR."""
    pair, fake = fork
    fake.fail[("POST", "/issues/1/labels")] = 422
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and "Traceback" not in err
    branch = f"sync/{pair.tip[:8]}"
    assert fake.head_of(branch) is not None and list(fake.pulls) == [1] and fake.pulls[1]["labels"] == []
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "current", err  # today: stale-branch, the PR never found
    assert list(fake.pulls) == [1] and [x["name"] for x in fake.pulls[1]["labels"]] == ["vimesync-sync"]
    assert "labelled #1 vimesync-sync" in doc["writes"] and "#1 (" in fake.dashboard()["body"]
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["writes"] == [] and len(fake.writes) == writes, err
