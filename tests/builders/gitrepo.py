"""Builders for real git repositories in tmp_path (tests only).

All git calls go through ``vimesync.git.run`` so tests get the same hermetic environment
as the tool, plus a fixed identity and dates so shas are reproducible.
"""

from __future__ import annotations

from pathlib import Path

from vimesync import git

# The one fixed identity and clock for commits the tests make (reproducible shas).
IDENTITY = {
    "GIT_AUTHOR_NAME": "vimesync",
    "GIT_AUTHOR_EMAIL": "vimesync@localhost",
    "GIT_COMMITTER_NAME": "vimesync",
    "GIT_COMMITTER_EMAIL": "vimesync@localhost",
}
EPOCH = 1_700_000_000
_TICK = [EPOCH]


def commit_env(when: int = EPOCH) -> dict[str, str]:
    """The fixed identity, author and committer dated ``when`` (seconds, UTC)."""
    date = f"{when} +0000"
    return {**IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


def _env() -> dict[str, str]:
    _TICK[0] += 60  # each commit a minute after the one before
    return commit_env(_TICK[0])


class Repo:
    """A real git repository with a small commit-building vocabulary."""

    def __init__(self, path: Path, *, bare: bool = False, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "-q", f"--initial-branch={branch}"] + (["--bare"] if bare else [])
        git.run(path, args)

    def git(self, *args: str) -> str:
        return git.run(self.path, list(args), env=_env()).decode("utf-8", "surrogateescape")

    def write(self, files: dict[str, bytes | str | None]) -> None:
        """Write (or with None, delete) files in the work tree and stage them."""
        for name, content in files.items():
            p = self.path / name
            if content is None:
                self.git("rm", "-q", "--", name)
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content.encode() if isinstance(content, str) else content)
            self.git("add", "--", name)

    def commit(self, message: str, files: dict[str, bytes | str | None] | None = None) -> str:
        if files:
            self.write(files)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)

    def merge(self, branch: str, message: str) -> str:
        self.git("merge", "-q", "--no-ff", "-m", message, branch)
        return self.head()
