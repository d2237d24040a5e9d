"""A held PR's hint, run as a maintainer would (issue 32): the PR's branch has their commit, so
the bot never pushes to it and names the command that brings the pending upstream PRs in. Run in
a clone of the fork, it carries them onto the branch as the remote has it and fast-forwards the
branch; the next bot run still leaves the branch alone and no longer lists them as pending."""

from __future__ import annotations

import shlex

import pytest

from tests.builders.botrun import bot, maintainer_commit
from tests.builders.pair import cli
from vimesync import git
from vimesync.report.mentions import BOT_END

pytestmark = pytest.mark.slow  # real syncs in real repositories

FILE = {"GIT_ALLOW_PROTOCOL": "file"}


def test_the_held_prs_hint_brings_the_pending_prs_in(fork, capsys) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    branch = doc["branch"]
    fix = maintainer_commit(pair, fake.remote, branch)
    pair.up.commit("Add f (#5)", {"slime/f.py": "from slime import x\n"})
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "hold", err
    body = fake.open_pull()["body"]
    (line,) = [ln for ln in body.splitlines() if ln.startswith("Bring them in")]
    steps = line.split("`")[1].split(", then ")
    assert [s.split()[:2] for s in steps] == [["git", "fetch"], ["vimesync", "carry"], ["git", "push"]]
    # a maintainer's clone of the fork, beside the upstream (the config's ../up)
    clone = pair.root / "maint"
    git.run(pair.root, ["clone", "-q", "-b", "main", str(fake.remote), str(clone)], env=FILE)
    for step in steps:
        words = shlex.split(step)
        if words[0] == "git":
            git.run(clone, words[1:], env=FILE)
        else:
            code, out, err = cli(capsys, *words[1:], cwd=clone)
            assert code == 0, err
    head = fake.head_of(branch)
    assert head is not None and head != fix and git.is_ancestor(fake.remote, fix, head)  # a fast-forward
    assert git.run(fake.remote, ["show", f"{head}:vime/f.py"]).decode() == "from vime import x\n"
    # the bot (its checkout fetched every branch, as the workflow's fetch-depth: 0 does): still
    # the maintainers' branch, and #5 is no longer pending
    git.run(pair.down.path, ["fetch", "-q", "origin"], env=FILE)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "hold" and fake.head_of(branch) == head, err
    block = fake.open_pull()["body"].split(BOT_END)[0]
    assert "#5" not in block and "Pending upstream PRs" not in block
    assert "#5" not in fake.dashboard()["body"].split("## Upstream PRs pending")[1].split("##")[0]


def test_only_the_upstreams_trailers_count_as_carried(tmp_path) -> None:
    from tests.builders.gitrepo import Repo
    from vimesync.app.botobserve import carried_on

    repo = Repo(tmp_path / "r")
    base = repo.commit("base", {"a": "1\n"})
    repo.commit("x\n\nUpstream-PR: THUDM/slime#5")
    repo.commit("y\n\nUpstream-PR: evil/repo#6\nUpstream-PR: #7")
    repo.commit("z\n\nUpstream-PR: thudm/SLIME#99999999999\n\nnot a trailer: Upstream-PR: THUDM/slime#8")
    head = repo.head()
    assert carried_on(repo.path, base, head, "THUDM/slime") == {5, 7}
    assert carried_on(repo.path, base, "f" * 40, "THUDM/slime") == frozenset()  # not here: none
