"""``vimesync bot`` against a local bare repository as the remote and the fork on a loopback
GitHub (issue 32): the first run, a second run that writes nothing, upstream moving, a
maintainer's commit on the branch, a conflict, and the token nowhere but in the environment."""

from __future__ import annotations

import json

import pytest

from tests.builders.botrun import bot, maintainer_commit, maintainer_push
from tests.builders.fakegithub import TOKEN
from tests.builders.pair import cli
from vimesync import git
from vimesync.report.mentions import BOT_END, BOT_STATE, DASHBOARD, START

pytestmark = pytest.mark.slow  # real syncs in real repositories


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


def test_upstream_moves_the_pr_follows_then_a_maintainer_commit_is_never_rewritten(fork, capsys) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    branch = doc["branch"]
    first = fake.head_of(branch)
    # upstream moves: the bot syncs again from main and pushes with a lease on what it pushed
    pair.up.commit("Add e (#4)", {"slime/e.py": "from slime import x\n"})
    tip2 = pair.up.head()
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "follow" and doc["lease"] == first and doc["pushed"] == "pushed"
    second = fake.head_of(branch)
    assert second != first and doc["sync"]["head"] == second
    pull = fake.open_pull()
    assert f"pushed={second} tip={tip2}" in pull["body"] and len(fake.pulls) == 1
    assert [w[0] for w in fake.writes].count("POST") == 3  # the PR, its label, the dashboard: once
    # a maintainer commits on the branch, then upstream moves again
    fix = maintainer_commit(pair, fake.remote, branch)
    pair.up.commit("Add f (#5)", {"slime/f.py": "from slime import x\n"})
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["case"] == "hold" and doc["pushed"] is None
    assert fake.head_of(branch) == fix  # the maintainer's commit survives
    body = fake.open_pull()["body"]
    pending = body.split("Pending upstream PRs:")[1].split(BOT_END)[0]
    assert "#5 Add f" in pending and "#4" not in pending
    assert "vimesync carry --onto" in body and "--pr 5" in body
    assert "#5 Add f" in fake.dashboard()["body"]
    # nothing new: no write at all
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["writes"] == [] and len(fake.writes) == writes


def test_a_push_racing_the_bot_refuses_its_lease(fork, capsys, monkeypatch) -> None:
    pair, fake = fork
    code, doc, err = bot(capsys, pair)
    branch = doc["branch"]
    pair.up.commit("Add e (#4)", {"slime/e.py": "from slime import x\n"})
    # the bot's state says it pushed X; a maintainer pushes between the listing and the push
    real = git.push

    def racing(*args, **kwargs):
        maintainer_commit(pair, fake.remote, branch)
        return real(*args, **kwargs)

    monkeypatch.setattr(git, "push", racing)
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 1 and doc["pushed"] == "lease refused"
    assert "someone pushed meanwhile" in " ".join(doc["notes"])
    assert fake.head_of(branch) != doc["sync"]["head"] and len(fake.writes) == writes


def test_a_conflict_opens_a_draft_naming_the_next_command(fork, capsys) -> None:
    pair, fake = fork
    pair.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["sync"]["stopped"] == "carry"
    pull = fake.open_pull()
    assert pull["draft"] is True
    assert "stopped at **carry**" in pull["body"] and "vime/a.py" in pull["body"]
    assert f"vimesync sync --branch {doc['branch']}" in pull["body"]
    assert "git push --force-with-lease origin" in pull["body"]
    assert "/tmp/vimesync-bot-" not in pull["body"]
    assert "stopped at **carry**" in fake.dashboard()["body"]
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_the_token_is_nowhere_on_disk_or_in_output(fork, capsys, tmp_path) -> None:
    pair, fake = fork
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 0, err
    assert TOKEN not in out + err
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert all(TOKEN not in json.dumps(w) for w in fake.writes)
    assert fake.headers[0]["authorization"].endswith(TOKEN)  # GitHub got it, in a header


def test_the_push_authenticates_through_the_environment_only() -> None:
    from vimesync.git.push import auth_env

    env = auth_env(TOKEN)
    assert env["GIT_CONFIG_KEY_0"] == "http.extraheader"
    assert TOKEN not in env["GIT_CONFIG_VALUE_0"]  # base64 of x-access-token:TOKEN
    import base64

    assert TOKEN in base64.b64decode(env["GIT_CONFIG_VALUE_0"].split()[-1]).decode()
    assert "GIT_CONFIG_COUNT" not in auth_env(None)


def test_an_upstream_title_cannot_plant_a_state_line_or_ping(fork, capsys) -> None:
    pair, fake = fork
    planted = f"@alice closes #1 {BOT_STATE}pushed={'0' * 40} tip={'0' * 40} stopped=none -->"
    pair.up.commit(f"{planted} (#6)", {"slime/g.py": "from slime import x\n"})
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    body = fake.open_pull()["body"]
    assert body.count(BOT_STATE) == 1 and "<code>@alice</code>" in body
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "current" and doc["writes"] == []  # still its own PR


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--repo", "not a repo"], {}, "owner/name"),
        (["--repo", "vime-org/vime", "--base", "develop"], {}, "--base 'develop'"),
        (["--repo", "vime-org/vime"], {"GITHUB_TOKEN": ""}, "needs a GitHub token"),
    ],
)
def test_bad_input_is_exit_2(fork, capsys, monkeypatch, args, env, says) -> None:
    pair, fake = fork
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    code, out, err = cli(capsys, "bot", *args, cwd=pair.down.path)
    assert code == 2 and says in err and fake.writes == []
    assert "Traceback" not in err


def test_someone_elses_sync_pr_is_not_the_bots(fork, capsys) -> None:
    pair, fake = fork
    fake.pulls[50] = {
        "number": 50,
        "state": "open",
        "title": "my own sync",
        "body": "by hand",
        "draft": False,
        "head": "sync/byhand",
        "base": "main",
        "sha": "1" * 40,
        "labels": [],
        "html_url": "https://github.com/vime-org/vime/pull/50",
    }
    code, doc, err = bot(capsys, pair, "--dry-run")
    assert code == 0 and doc["case"] == "open" and fake.writes == []


def test_a_conflict_before_any_commit_is_on_the_dashboard(fork, capsys) -> None:
    pair, fake = fork
    pair.down.commit("ours", {"vime/c.py": "import vime.ours\n"})  # upstream #1 adds slime/c.py
    maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    assert doc["sync"]["stopped"] == "carry" and doc["sync"]["head"] is None and doc["pushed"] is None
    assert fake.pulls == {}
    body = fake.dashboard()["body"]
    assert "stopped at **carry** before it made a commit" in body and "vime/c.py" in body
    assert "vimesync sync --branch" in body
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["writes"] == [] and len(fake.writes) == writes
