"""The sync bot's test fork (tests only): the downstream of a :func:`~tests.builders.pair.build_pair`
with a local bare repository as its ``origin`` and the fork on a loopback GitHub
(:class:`~tests.builders.fakefork.FakeFork`), and the bot run through the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.builders.fakefork import FakeFork
from tests.builders.fakegithub import TOKEN, serve
from tests.builders.gitrepo import EPOCH, Repo, commit_env
from tests.builders.pair import Pair, build_pair, cli
from vimesync import git


@contextmanager
def bot_fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Pair, FakeFork]]:
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


def maintainer_commit(pair: Pair, remote: Path, branch: str) -> str:
    """A maintainer's fix pushed on top of the bot's branch (a clone of their own)."""
    work = Repo(pair.root / "maintainer")
    env = {**commit_env(EPOCH + 10**6), "GIT_ALLOW_PROTOCOL": "file"}
    git.run(work.path, ["fetch", "-q", str(remote), f"{branch}:{branch}"], env=env)
    work.checkout(branch)
    sha = work.commit("a maintainer's fix", {"FIX.md": "fixed by hand\n"})
    git.run(work.path, ["push", "-q", str(remote), f"{branch}:{branch}"], env=env)
    return sha


DIVERGED = "from vime import x\nprint(1)\nprint('downstream')\n"  # conflicts with upstream #2
ORIGINAL = "from vime import x\nprint(1)\n"


GATES = """\
[off]
patches = "this fork carries no engine patches"
tests = "this fork records no evidence"
ci = "no CI contexts here"
images = "no images"
"""


def passing(pair: Pair) -> None:
    """main switches off the gates this fork cannot pass (no engine, no evidence): a sync that
    carries cleanly then stops at nothing."""
    pair.down.commit("gates", {"sop/gates.toml": GATES})
    maintainer_push(pair.down.path, "main")


def main_sets_a(pair: Pair, text: str) -> None:
    pair.down.commit("main's a.py", {"vime/a.py": text})
    maintainer_push(pair.down.path, "main")
