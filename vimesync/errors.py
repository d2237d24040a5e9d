"""The one error hierarchy of vimesync.

Core code raises these; only the CLI boundary (``vimesync.cli.app``) turns them into
a message on stderr and an exit code. Core never prints or exits.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2


class VimesyncError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class Terminated(BaseException):
    """SIGTERM (a CI timeout, ``kill``) as an exception: unwinding runs every ``with`` block, so
    scratch folders and worker processes are cleaned up as on Ctrl-C. A BaseException, so that
    no ``except Exception`` on the way can swallow it."""


class Interrupted(VimesyncError):
    """SIGINT or SIGTERM stopped a command that left work to resume (the message says how):
    exit 128 + the signal's number, as a shell reports a process the signal ended."""

    def __init__(self, message: str, *, signum: int) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


class JobStopped(VimesyncError):
    """vimesync stopped a job it ran (``sop record run``, ``sop regress``, ``sop record
    precommit``): it passed its ``--timeout`` or its output bound. Nothing is recorded; the check
    did not pass, so exit 1."""

    exit_code = 1


class BadInput(VimesyncError):
    """The user gave us something we cannot use: a missing file, an unknown rev, a bad flag."""


class ConfigError(BadInput):
    """A config, pin, policy or ledger file is malformed. Names the file (and line when known)."""

    def __init__(self, path: str, message: str, *, line: int | None = None, hint: str | None = None) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", hint=hint)
        self.path = path
        self.line = line


class PatchError(BadInput):
    """A patch file is malformed or unsafe. Names the patch, and the file/hunk/line when known."""

    def __init__(
        self,
        patch: str,
        message: str,
        *,
        line: int | None = None,
        file: str | None = None,
        hunk: int | None = None,
    ) -> None:
        parts = [patch + (f":{line}" if line else "")]
        if file:
            parts.append(file)
        if hunk:
            parts.append(f"hunk #{hunk}")
        super().__init__(f"{': '.join(parts)}: {message}")
        self.patch = patch
        self.line = line
        self.file = file
        self.hunk = hunk


class GitError(BadInput):
    """A git command failed in a way that means the input is wrong (not a repo, unknown rev)."""


class GitTimeout(GitError):
    """A git command ran past the time its caller allowed (it was killed)."""


class GitHubError(VimesyncError):
    """GitHub could not be reached or refused us (rate limit, auth). Never carries the token."""


class BuildkiteError(VimesyncError):
    """Buildkite's REST API could not be read (unreachable, refused, an answer out of bounds or
    of the wrong shape). Never carries the token."""


class RegistryError(VimesyncError):
    """A container registry could not be read (unreachable, refused, an answer out of bounds or
    of the wrong shape). Never carries the token or the registry's text."""
