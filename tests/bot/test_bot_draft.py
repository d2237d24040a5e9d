"""A followed sync PR is a draft exactly when its sync stops at a decision (issue 32): a later sync
that passes makes the draft ready for review, one that stops makes a ready PR a draft again. The
REST API cannot; GitHub's GraphQL mutations can, and the loopback GitHub answers them as GitHub
does (by the pull request's node id)."""

from __future__ import annotations

import pytest

from tests.builders.botrun import DIVERGED, ORIGINAL, bot, main_sets_a, passing
from tests.builders.fakefork import FakeFork
from tests.builders.pair import Pair

pytestmark = pytest.mark.slow  # real syncs in real repositories


def upstream_moves(pair: Pair, n: int) -> None:
    pair.up.commit(f"Add e{n} (#{n})", {f"slime/e{n}.py": "from slime import x\n"})


def mutations(fake: FakeFork, since: int) -> list[str]:
    return [w[2]["query"].split("(input")[0].split()[-1] for w in fake.writes[since:] if w[1] == "/graphql"]


def test_a_draft_becomes_ready_when_a_later_sync_passes(fork, capsys) -> None:
    pair, fake = fork
    passing(pair)
    main_sets_a(pair, DIVERGED)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["sync"]["stopped"] == "carry", err
    assert fake.open_pull()["draft"] is True
    # main takes its change back, upstream moves: the next sync passes
    main_sets_a(pair, ORIGINAL)
    upstream_moves(pair, 4)
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "follow" and doc["sync"]["stopped"] is None
    assert fake.open_pull()["draft"] is False  # today: a draft for good
    assert mutations(fake, writes) == ["markPullRequestReadyForReview"]
    assert f"made #{fake.open_pull()['number']} ready for review" in doc["writes"]
    assert "stopped at" not in fake.open_pull()["body"].split("<!-- vimesync:bot:end -->")[0]
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["writes"] == [] and len(fake.writes) == writes


def test_a_ready_pr_becomes_a_draft_when_a_later_sync_stops(fork, capsys) -> None:
    pair, fake = fork
    passing(pair)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["sync"]["stopped"] is None, err
    assert fake.open_pull()["draft"] is False
    main_sets_a(pair, DIVERGED)
    upstream_moves(pair, 4)
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "follow" and doc["sync"]["stopped"] == "carry", err
    assert fake.open_pull()["draft"] is True
    assert mutations(fake, writes) == ["convertPullRequestToDraft"]


def test_a_graphql_error_is_a_github_error_not_a_traceback(fork, capsys, monkeypatch) -> None:
    pair, fake = fork
    passing(pair)
    main_sets_a(pair, DIVERGED)
    bot(capsys, pair)
    main_sets_a(pair, ORIGINAL)
    upstream_moves(pair, 4)
    real = fake._pull_json
    monkeypatch.setattr(fake, "_pull_json", lambda p: {**real(p), "node_id": "PR_gone"})
    code, out, err = bot_raw(capsys, pair)
    assert code == 2 and "markPullRequestReadyForReview" in err and "Traceback" not in err
    assert "PR_gone" not in err  # GitHub's message is not echoed


def bot_raw(capsys, pair):
    from tests.builders.pair import cli

    return cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
