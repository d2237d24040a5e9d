"""The bot's push over https, end to end (issue 32): a real smart-HTTP server on loopback (``git
http-backend`` as CGI behind python's http.server, over TLS) that answers only the
``Authorization`` header the token should produce. The push and its lease go through it; the
token is in no git argv (a shim on PATH logs each), in no request line, in no file under the
repository, in no output or error."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tests.builders.botrun import bot
from tests.builders.fakegithub import TOKEN
from tests.builders.gitrepo import Repo
from tests.builders.pair import cli
from tests.builders.smarthttp import SmartHTTP, expected_header, smart_http
from vimesync import git
from vimesync.errors import GitError

pytestmark = pytest.mark.slow  # real git over a real https server

SECRETS = (TOKEN.encode(), base64.b64encode(f"x-access-token:{TOKEN}".encode()))


def shim(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that logs its argv, one line each, then runs the real git."""
    real, log = Path(git_binary()), folder / "argv.log"
    folder.mkdir()
    script = folder / "git"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def git_binary() -> str:
    import shutil

    found = shutil.which("git")
    assert found is not None
    return found


def nowhere(paths: list[Path], texts: list[str]) -> None:
    """Neither the token nor its header form in any file under ``paths`` or in ``texts``."""
    for root in paths:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                assert not any(s in data for s in SECRETS), path
    for text in texts:
        assert not any(s.decode() in text for s in SECRETS)


def served_once_each(server: SmartHTTP) -> None:
    """Every request the server answered carried the header; no request line held the token."""
    want = expected_header(TOKEN)
    assert server.requests and all(TOKEN not in line for line, _ in server.requests)
    assert all(TOKEN not in v for _, h in server.requests for v in h.values())
    answered = [h for _, h in server.requests if h.get("authorization") == want]
    assert len(answered) == len(server.requests) - server.refused and answered
    assert all(not any(s.decode() in v for s in SECRETS) for env in server.cgi_envs for v in env.values())


def test_the_push_and_its_lease_go_over_https_with_the_token_in_a_header_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = tmp_path / "served"
    Repo(served / "fork.git", bare=True)
    work = Repo(tmp_path / "work")
    first = work.commit("one", {"a.txt": "1\n"})
    with smart_http(served, TOKEN, tmp_path) as server:
        work.git("remote", "add", "bot-push", f"{server.url}/fork.git")
        work.git("config", "http.sslCAInfo", str(server.cert))  # the job's CA, as a runner sets it
        log = shim(tmp_path / "shim", monkeypatch)
        said: list[str] = []
        assert git.remote_head(work.path, "bot-push", "sync/x", token=TOKEN) is None
        done = git.push(work.path, "bot-push", first, "sync/x", lease="", token=TOKEN)
        assert done.status == "pushed"
        assert git.remote_head(work.path, "bot-push", "sync/x", token=TOKEN) == first
        second = work.commit("two", {"a.txt": "2\n"})
        assert git.push(work.path, "bot-push", second, "sync/x", lease=first, token=TOKEN).status == "pushed"
        third = work.commit("three", {"a.txt": "3\n"})
        refused = git.push(work.path, "bot-push", third, "sync/x", lease=first, token=TOKEN)
        assert refused.status == "lease refused"  # the branch is at second: nothing overwritten
        assert git.run(served / "fork.git", ["rev-parse", "sync/x"]).decode().strip() == second
        assert server.refused == 0
        # the wrong token, and none: refused by the server, the error without the token
        for token in ("ghp_wrong_token_000", None):
            with pytest.raises(GitError) as exc:
                git.push(work.path, "bot-push", third, "sync/x", lease=second, token=token)
            said.append(str(exc.value))
        assert server.refused >= 2
        served_once_each(server)
        argv = log.read_text()
        assert "push" in argv and "ls-remote" in argv  # the shim saw the runs
        nowhere([work.path], [argv, *said])
        assert git.run(served / "fork.git", ["rev-parse", "sync/x"]).decode().strip() == second
        # the undo of a push: only while the branch is where this run pushed it
        undo = git.unpush(work.path, "bot-push", "sync/x", pushed=first, back="", token=TOKEN)
        assert undo.status == "lease refused"
        undo = git.unpush(work.path, "bot-push", "sync/x", pushed=second, back="", token=TOKEN)
        assert (
            undo.status == "pushed" and git.remote_head(work.path, "bot-push", "sync/x", token=TOKEN) is None
        )


def test_the_bot_opens_and_follows_its_pr_over_https(fork, capsys, tmp_path, monkeypatch) -> None:
    pair, fake = fork
    with smart_http(tmp_path, TOKEN, tmp_path) as server:  # serves tmp_path/remote.git, the fork's
        pair.down.git("remote", "add", "bot-push", f"{server.url}/remote.git")
        pair.down.git("config", "http.sslCAInfo", str(server.cert))
        log = shim(tmp_path / "shim", monkeypatch)
        code, doc, err = bot(capsys, pair, "--remote", "bot-push")
        assert code == 0 and doc["pushed"] == "pushed", err
        first = fake.head_of(doc["branch"])
        assert first == doc["sync"]["head"]
        pair.up.commit("Add e (#4)", {"slime/e.py": "from slime import x\n"})
        code, out, err = cli(
            capsys, "bot", "--repo", "vime-org/vime", "--remote", "bot-push", cwd=pair.down.path
        )
        assert code == 0, err
        assert fake.head_of(doc["branch"]) not in (None, first)  # followed, with a lease on first
        served_once_each(server)
        assert server.refused == 0
        nowhere([pair.down.path], [log.read_text(), out, err, str(doc)])
