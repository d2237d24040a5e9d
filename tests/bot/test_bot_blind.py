"""A run that cannot observe (issue 32): the walk before the listing fails (a policy file the
parser rejects, a pin the upstream does not have, a branch the upstream does not have). The
listing can still be made, so the dashboard says the run could not observe, in fixed words per
error class (never the file's content or name), the sync PR is left as it is, nothing is pushed,
and the run exits 2; a second run with the same failure writes nothing."""

from __future__ import annotations

import pytest

from tests.builders.botrun import bot, maintainer_push
from tests.builders.pair import PIN, Pair, cli

pytestmark = pytest.mark.slow  # real syncs in real repositories

HOSTILE = "@alice closes #1 <!-- vimesync:dashboard --> `x` ](javascript:alert(1))"


def policy_rejected(pair: Pair) -> None:
    config = (pair.down.path / "vimesync.toml").read_text()
    config = config.replace(
        'pin = "pins/slime.toml"\n', 'pin = "pins/slime.toml"\npolicy = "sop/policy.toml"\n'
    )
    pair.down.commit(
        "a policy", {"vimesync.toml": config, "sop/policy.toml": f"[[rule]]\naction = '{HOSTILE}'\n"}
    )


def pin_unknown(pair: Pair) -> None:
    pair.down.commit("a pin the upstream lacks", {"pins/slime.toml": PIN.format(base="f" * 40)})


def branch_unknown(pair: Pair) -> None:
    config = (pair.down.path / "vimesync.toml").read_text()
    config = config.replace('path = "../up"\n', 'path = "../up"\nbranch = "gone-branch"\n')
    pair.down.commit("a branch the upstream lacks", {"vimesync.toml": config})


def board(fake) -> str:
    return fake.dashboard()["body"]


@pytest.mark.parametrize(
    ("breaks", "says"),
    [
        (policy_rejected, "a configuration file (vimesync.toml, a pin or the policy) was refused"),
        (pin_unknown, "the upstream does not have a commit the checkout names"),
        (branch_unknown, "the upstream does not have a commit the checkout names"),
    ],
)
def test_a_run_that_cannot_observe_says_so_on_the_dashboard(fork, capsys, breaks, says) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)  # a first run: the PR and the dashboard
    assert code == 0, err
    pr = fake.open_pull()
    breaks(pair)
    maintainer_push(pair.down.path, "main")
    writes = len(fake.writes)
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and "Traceback" not in err
    body = board(fake)
    (line,) = [ln for ln in body.splitlines() if ln.startswith("**The run could not observe**: ")]
    assert says in line  # today: the run stops before the listing, the dashboard is as it was
    assert "alice" not in body and "javascript" not in body and "policy.toml" not in body
    assert body.count("<!-- vimesync:dashboard -->") == 1 and f"#{pr['number']}" in body
    assert [w[0] for w in fake.writes[writes:]] == ["PATCH"]  # the dashboard only: the PR as it was
    assert fake.open_pull()["body"] == pr["body"]
    writes = len(fake.writes)
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and len(fake.writes) == writes


def test_a_first_run_that_cannot_observe_opens_the_dashboard(fork, capsys) -> None:
    pair, fake = fork
    pin_unknown(pair)
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and fake.pulls == {}
    assert "**The run could not observe**" in board(fake)
    assert "None open." in board(fake)
