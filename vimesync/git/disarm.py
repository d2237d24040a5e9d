"""The disarmed command line and environment every git child gets.

Command-scope config (``-c``) beats the repository's own, so every call carries ``SAFE_CONFIG``;
the environment (built from the job's settings snapshot, :mod:`vimesync.settings`) keeps an
allow-list of the job's variables, so inherited GIT_* variables and secrets are dropped, and adds
``SAFE_ENV``; diff-producing commands get ``--no-ext-diff --no-textconv`` that no later argument
can switch back on. What each setting disarms: the table in :mod:`vimesync.git`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vimesync.errors import GitError
from vimesync.settings import installed

# Command-scope config on every call: it overrides the repository's own (see the table in vimesync.git).
SAFE_CONFIG = (
    # safe.directory: read repositories owned by another user (CI caches, mirrors) without a global config.
    "safe.directory=*",
    "core.quotepath=false",
    "core.fsmonitor=false",
    "core.hooksPath=" + os.devnull,
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=",
    "core.attributesFile=" + os.devnull,
    "core.useReplaceRefs=false",
    "diff.external=",
    "log.showSignature=false",
    "gpg.program=" + os.devnull,
    "gpg.openpgp.program=" + os.devnull,
    "gpg.x509.program=" + os.devnull,
    "gpg.ssh.program=" + os.devnull,
    "credential.helper=",
    "protocol.allow=never",
    "color.ui=false",
    "trailer.separators=:",
    "advice.graftFileDeprecated=false",
    "maintenance.auto=false",
    "gc.auto=0",
    # git-lfs's filters are the only ones a repository may configure (repocheck refuses any other
    # driver command); vimesync reads objects, never needs a filter, and a carry checks out files
    # whose .gitattributes a hostile upstream wrote (``*.bin filter=lfs`` and a .lfsconfig naming
    # its server): every filter run is switched off, so git-lfs never starts.
    "filter.lfs.clean=",
    "filter.lfs.smudge=",
    "filter.lfs.process=",
    "filter.lfs.required=false",
)
SAFE_ARGV = ("git", "--no-pager", "--no-replace-objects", *(a for kv in SAFE_CONFIG for a in ("-c", kv)))

SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_NO_LAZY_FETCH": "1",  # honoured by git >= 2.45; partial clones are refused anyway
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_GRAFT_FILE": os.devnull,
    "GIT_ALLOW_PROTOCOL": "",  # no transport at all: overrides protocol.<x>.allow in the repository
    "LC_ALL": "C",
    "LANG": "C",
}

# Commands that produce diffs: textconv and external diff drivers are switched off in each.
_DIFF_COMMANDS = {
    "diff",
    "log",
    "show",
    "diff-tree",
    "diff-index",
    "diff-files",
    "format-patch",
    "whatchanged",
}
_DIFF_FLAGS = ("--no-ext-diff", "--no-textconv")
_TEXTCONV_COMMANDS = {"blame", "grep"}
_REENABLE = {"--ext-diff", "--textconv"}
CREATING = {"init", "clone"}

# What a git child may see of our environment: what git itself needs to run (where programs and
# libraries are, the home folder, temporary files, the time zone, the locale) and nothing else. A
# deny-list of secret-looking names missed OPENAI_APIKEY and CI_JOB_JWT; every GIT_* variable of
# the caller is dropped too (ours come from SAFE_ENV and the caller's ``extra``).
_ALLOWED_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "TMP",
        "TEMP",
        "TZ",
        "LANG",
        "LANGUAGE",
        "LD_LIBRARY_PATH",
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
    }
)
MAX_MESSAGE = 1000  # characters of git's stderr kept in an error


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child gets: an allow-list of the job's (see ``_ALLOWED_ENV``;
    ``LC_*`` too) from its settings snapshot (the one the CLI installed), plus hermetic settings
    and ``extra``."""
    return installed().child_env(allow=_ALLOWED_ENV, prefixes=("LC_",), extra={**SAFE_ENV, **(extra or {})})


_OPTIONS_WITH_VALUE = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def _subcommand(args: Sequence[str]) -> int:
    """The index of the subcommand in ``args`` (after global options such as ``-c k=v``)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _OPTIONS_WITH_VALUE else 1
    return i


def refuse_nul(cwd: Path | str | None, args: Sequence[str]) -> None:
    """GitError for a NUL byte in an argument or the folder (the OS would raise ValueError)."""
    if cwd is not None and "\0" in str(cwd):
        raise GitError("refusing to run git in a folder whose name holds a NUL byte")
    for arg in args:
        if "\0" in arg:
            raise GitError(
                f"refusing to run git {command(args) or '(no command)'}: an argument holds a NUL byte"
            )


def argv(args: Sequence[str]) -> list[str]:
    """The full command line: hardened options, then ``args`` with diff drivers switched off."""
    refuse_nul(None, args)
    i = _subcommand(args)
    if i >= len(args):
        return [*SAFE_ARGV, *args]
    flags: tuple[str, ...] = ()
    rest = list(args[i + 1 :])
    if args[i] in _DIFF_COMMANDS or args[i] in _TEXTCONV_COMMANDS:
        flags = _DIFF_FLAGS if args[i] in _DIFF_COMMANDS else ("--no-textconv",)
        # Nothing may switch them back on (options end at "--"; paths after it are kept).
        end = rest.index("--") if "--" in rest else len(rest)
        rest = [a for a in rest[:end] if a not in _REENABLE] + rest[end:]
    return [*SAFE_ARGV, *args[: i + 1], *flags, *rest]


def command(args: Sequence[str]) -> str:
    i = _subcommand(args)
    return args[i] if i < len(args) else ""


def env_for(args: Sequence[str], extra: dict[str, str] | None) -> dict[str, str]:
    env = git_env(extra)
    if command(args) == "clone" and not (extra and "GIT_ALLOW_PROTOCOL" in extra):
        env["GIT_ALLOW_PROTOCOL"] = "file"  # vimesync clones only local repositories it built
    return env


def message(repo: Path, args: Sequence[str], stderr: bytes) -> str:
    cmd = command(args) or "(no command)"
    msg = stderr.decode("utf-8", "replace").strip()[:MAX_MESSAGE] or f"git {cmd} failed"
    return f"{repo}: git {cmd}: {msg}"
