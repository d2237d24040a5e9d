"""Pushing one commit to one branch of a remote, with a lease: the sync bot's one write to git.

The push names the exact sha the remote branch must be at (``--force-with-lease=<ref>:<sha>``, an
empty sha: the branch must not exist), so a push racing a maintainer's is refused, never
overwrites. The token reaches git only through the child's environment: ``GIT_CONFIG_COUNT`` /
``GIT_CONFIG_KEY_0`` / ``GIT_CONFIG_VALUE_0`` set ``http.extraheader`` for this one process
(as actions/checkout's header, without writing it to ``.git/config``), never argv, the remote's
URL, a config file or a log line. Transports: https and local files only.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vimesync.errors import GitError
from vimesync.git.process import run_status

PushStatus = Literal["pushed", "up to date", "lease refused"]


@dataclass(frozen=True)
class Pushed:
    status: PushStatus
    ref: str


def auth_env(token: str | None) -> dict[str, str]:
    """The environment that authenticates one push over https: an extra header holding the token,
    as command-scope config from the environment (nothing on disk, nothing in argv)."""
    env = {"GIT_ALLOW_PROTOCOL": "https:file"}
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env |= {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
        }
    return env


def _scrub(text: str, token: str | None) -> str:
    """git's message with the token (and its header form) taken out, should git ever echo one."""
    if token:
        text = text.replace(token, "***")
        text = text.replace(base64.b64encode(f"x-access-token:{token}".encode()).decode(), "***")
    return text


def remote_head(repo: Path, remote: str, branch: str, *, token: str | None) -> str | None:
    """Where ``refs/heads/<branch>`` of ``remote`` is (None: absent), asked as the push asks
    (the token through the environment only); GitError when the remote cannot be asked."""
    ref = f"refs/heads/{branch}"
    args = ["ls-remote", "--heads", "--end-of-options", remote, ref]
    code, out, err = run_status(repo, args, env=auth_env(token))
    if code != 0:
        said = _scrub(err.decode("utf-8", "replace").strip()[:1000], token)
        raise GitError(f"{repo}: git ls-remote {remote} failed: {said}")
    for line in out.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name == ref and len(sha) in (40, 64):
            return sha
    return None


def push(repo: Path, remote: str, sha: str, branch: str, *, lease: str, token: str | None) -> Pushed:
    """Push ``sha`` to ``refs/heads/<branch>`` of ``remote`` if the remote branch is at ``lease``
    ("" : absent). ``lease refused``: it is elsewhere (someone pushed meanwhile); GitError for any
    other failure (its message without the token)."""
    return _push(repo, remote, f"{sha}:refs/heads/{branch}", branch, lease=lease, token=token)


def unpush(repo: Path, remote: str, branch: str, *, pushed: str, back: str, token: str | None) -> Pushed:
    """Put ``refs/heads/<branch>`` of ``remote`` back at ``back`` ("": delete it) if it is still at
    ``pushed`` (what this run pushed): the undo of a push whose pull request could not be opened."""
    spec = f"{back}:refs/heads/{branch}" if back else f":refs/heads/{branch}"
    return _push(repo, remote, spec, branch, lease=pushed, token=token)


def _push(repo: Path, remote: str, spec: str, branch: str, *, lease: str, token: str | None) -> Pushed:
    ref = f"refs/heads/{branch}"
    args = [
        "push",
        "--porcelain",
        "--no-verify",
        f"--force-with-lease={ref}:{lease}",
        "--end-of-options",
        remote,
        spec,
    ]
    code, out, err = run_status(repo, args, env=auth_env(token))
    lines = [ln for ln in out.decode("utf-8", "replace").splitlines() if "\t" in ln]
    flag = lines[0][0] if lines else ""
    if code == 0:
        return Pushed("up to date" if flag == "=" else "pushed", ref)
    said = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
    if flag == "!" and ("stale info" in said or "fetch first" in said or "already exists" in said):
        return Pushed("lease refused", ref)
    raise GitError(f"{repo}: git push to {remote} failed: {_scrub(said.strip()[:1000], token)}")
