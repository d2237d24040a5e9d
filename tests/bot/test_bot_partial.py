"""A sync PR whose carry stopped part-way (issue 32): the PR holds the PRs carried before the
conflict, not the upstream tip its state line names, so the dashboard lists the rest as pending
(as the PR's title says: "partly: K of N")."""

from __future__ import annotations

import pytest

from tests.builders.botrun import DIVERGED, bot, main_sets_a, passing

pytestmark = pytest.mark.slow  # real syncs in real repositories


def pending(body: str) -> str:
    return body.split("## Upstream PRs pending (not in the sync PR)")[1].split("##")[0]


def test_the_prs_after_a_carry_conflict_are_pending(fork, capsys) -> None:
    pair, fake = fork
    passing(pair)
    main_sets_a(pair, DIVERGED)  # upstream #2 conflicts: #1 is carried, #2 and #3 are not
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["sync"]["stopped"] == "carry", err
    assert "partly" in fake.open_pull()["title"]
    said = pending(fake.dashboard()["body"])
    assert "#2 " in said and "#3 " in said  # today: "None."
    assert "#1 " not in said
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)  # the next run (nothing new) reads the same from the PR's head
    assert code == 0 and doc["case"] == "current" and len(fake.writes) == writes, err
