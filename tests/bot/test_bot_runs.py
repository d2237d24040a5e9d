"""``vimesync bot`` against a local bare repository as the remote and the fork on a loopback
GitHub (issue 32): the first run, a second run that writes nothing, upstream moving, a
maintainer's commit on the branch, a conflict, and the token nowhere but in the environment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.fakefork import FakeFork
from tests.builders.fakegithub import TOKEN, serve
from tests.builders.pair import Pair, build_pair, cli
from vimesync import git
from vimesync.report.mentions import BOT_STATE, DASHBOARD, START

pytestmark = pytest.mark.slow  # real syncs in real repositories


@pytest.fixture()
def fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Pair, FakeFork]]:
    pair = build_pair(tmp_path)
    remote = tmp_path / "remote.git"
    git.run(tmp_path, ["init", "-q", "--bare", str(remote)])
    pair.down.git("remote", "add", "origin", str(remote))
    maintainer_push(pair.down.path, "main")
    fake = FakeFork(remote)
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield pair, fake


def maintainer_push(repo: Path, *refspec: str) -> None:
    git.run(repo, ["push", "-q", "origin", *refspec], env={"GIT_ALLOW_PROTOCOL": "file"})


def bot(capsys: pytest.CaptureFixture[str], pair: Pair, *args: str) -> tuple[int, dict, str]:
    code, out, err = cli(capsys, "bot", "--json", "--repo", "vime-org/vime", *args, cwd=pair.down.path)
    return code, json.loads(out), err


def test_first_run_opens_the_pr_and_the_dashboard_and_a_second_writes_nothing(fork, capsys) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "open" and doc["pushed"] == "pushed"
    branch = f"sync/{pair.tip[:8]}"
    head = fake.head_of(branch)
    assert head is not None and doc["sync"]["head"] == head
    pull = fake.open_pull()
    assert pull["head"] == branch and pull["base"] == "main"
    assert START in pull["body"] and f"{BOT_STATE}pushed={head} tip={pair.tip}" in pull["body"]
    assert [x["name"] for x in pull["labels"]] == ["vimesync-sync"]
    dash = fake.dashboard()
    assert dash["body"].startswith(DASHBOARD) and f"#{pull['number']}" in dash["body"]
    # the local sync is gone again: no state, branch or worktree left behind
    assert not git.run_ok(pair.down.path, ["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"])
    assert not (git.git_dir(pair.down.path) / "vimesync-sync.json").exists()
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "current" and doc["writes"] == [] and doc["pushed"] is None
    assert len(fake.writes) == writes and fake.head_of(branch) == head
