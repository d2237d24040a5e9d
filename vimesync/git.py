"""The one place vimesync talks to git.

Every call runs ``git`` with an explicit ``cwd`` (or ``--git-dir``), a scrubbed environment
(no inherited GIT_* variables or secrets, no system/global config, no prompts, no optional
locks) and machine-readable (``-z``) output parsed by small pure helpers. Read paths never
touch a repository's work tree, index or refs. Nothing else in vimesync runs git directly.

Repositories are hostile input (a pull request may commit one, or name one in a pin), so no
command may run because of what a repository says. Every call carries ``_SAFE_CONFIG`` (command
scope beats the repository's own config) and ``_SAFE_ENV``; every diff-producing command gets
``--no-ext-diff --no-textconv``; and before the first command in a repository its config is
listed (includes followed, as git itself reads them) and the repository refused, naming the key
(never its value), when a key is set that these cannot disarm. The table, key by key:

==================================================  ========  ==========================================
key (``<x>`` any name)                              verdict   why
==================================================  ========  ==========================================
extensions.partialClone, remote.<x>.promisor,       refuse    lazy fetch: any missing object starts
remote.<x>.partialCloneFilter                                 ``git fetch`` (``uploadpack``, helpers...)
filter.<x>.clean / .smudge / .process               refuse    commands; -c cannot name unknown drivers
                                                              (git-lfs's own three values are allowed)
merge.<x>.driver                                    refuse    a command; same
core.worktree (unless it is the folder we use,      refuse    reads files outside what we were given
or one of its parents)
objects/info/alternates outside the git dir         refuse    reads objects from elsewhere on the machine
diff.<x>.textconv, diff.<x>.command, diff.external  disarmed  ``--no-textconv --no-ext-diff`` (+ -c)
core.fsmonitor, core.hooksPath (and hooks/*)        disarmed  -c core.fsmonitor=false, hooksPath=/dev/null
core.pager, pager.<cmd>                             disarmed  --no-pager, -c core.pager=cat, no tty
log.showSignature, gpg.program, gpg.<fmt>.program   disarmed  -c showSignature=false, programs=/dev/null
credential.helper, core.askPass                     disarmed  -c credential.helper= (resets), askPass=
core.sshCommand, core.gitProxy, remote.<x>.vcs,     disarmed  transports only: GIT_ALLOW_PROTOCOL=""
remote.<x>.uploadpack/receivepack, url.<x>.*,                 allows none (``clone``: ``file`` only),
protocol.<x>.allow, core.alternateRefsCommand                 and no lazy fetch (refused above)
core.attributesFile                                 disarmed  -c core.attributesFile=/dev/null
refs/replace/*, core.useReplaceRefs, info/grafts    disarmed  GIT_NO_REPLACE_OBJECTS, GIT_GRAFT_FILE
color.*                                             disarmed  -c color.ui=false (output we parse)
include.path, includeIf.<cond>.path                 checked   listed with the including file's keys
core.editor, sequence.editor, alias.*, difftool.*,  allowed   never run by the commands vimesync runs
mergetool.*, sendemail.*, web.browser,                        (no editing, no aliases: builtins win)
submodule.<x>.update, uploadpack.packObjectsHook
diff.<x>.xfuncname / funcname                       allowed   a regex, not a command
trace2.*                                            allowed   read from system/global config only
==================================================  ========  ==========================================

The verdict is cached per git directory for the process. ``init`` and ``clone`` create
repositories and are not inspected (their target is ours).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vimesync.errors import GitError, GitTimeout

NULL_SHA = "0" * 40  # git's "no object": a root commit's base, a deleted file's oid

# Tree entry modes as git writes them (ls-tree, diff headers); one set for sources and patches.
MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000  # a symlink: its bytes are its target
MODE_DIR = 0o040000
MODE_GITLINK = 0o160000  # a submodule; what git calls a directory found where a file was expected


def blob_oid(data: bytes) -> str:
    """The git blob id of ``data``, as ``git hash-object`` computes it (no git process: sha1 of
    ``"blob <size>\\0" + data``, fed in two parts so a large content is never copied)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


# Command-scope config on every call: it overrides the repository's own (see the table above).
_SAFE_CONFIG = (
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
)
_SAFE_ARGV = ("git", "--no-pager", "--no-replace-objects", *(a for kv in _SAFE_CONFIG for a in ("-c", kv)))

_SAFE_ENV = {
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
_CREATING = {"init", "clone"}

# Names of environment variables git never needs and a child must never see.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|(^|_)KEY($|_)|(^|_)PAT$|^ACTIONS_|^GH_|^SSH_ASKPASS$",
    re.IGNORECASE,
)
_MAX_MESSAGE = 1000  # characters of git's stderr kept in an error


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child gets: the caller's minus GIT_* and secrets, plus hermetic settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and not _SECRET_NAME.search(k)}
    env.update(_SAFE_ENV)
    if extra:
        env.update(extra)
    return env


_OPTIONS_WITH_VALUE = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def _subcommand(args: Sequence[str]) -> int:
    """The index of the subcommand in ``args`` (after global options such as ``-c k=v``)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _OPTIONS_WITH_VALUE else 1
    return i


def _refuse_nul(cwd: Path | str | None, args: Sequence[str]) -> None:
    """GitError for a NUL byte in an argument or the folder (the OS would raise ValueError)."""
    if cwd is not None and "\0" in str(cwd):
        raise GitError("refusing to run git in a folder whose name holds a NUL byte")
    for arg in args:
        if "\0" in arg:
            raise GitError(
                f"refusing to run git {_command(args) or '(no command)'}: an argument holds a NUL byte"
            )


def _argv(args: Sequence[str]) -> list[str]:
    """The full command line: hardened options, then ``args`` with diff drivers switched off."""
    _refuse_nul(None, args)
    i = _subcommand(args)
    if i >= len(args):
        return [*_SAFE_ARGV, *args]
    flags: tuple[str, ...] = ()
    rest = list(args[i + 1 :])
    if args[i] in _DIFF_COMMANDS or args[i] in _TEXTCONV_COMMANDS:
        flags = _DIFF_FLAGS if args[i] in _DIFF_COMMANDS else ("--no-textconv",)
        # Nothing may switch them back on (options end at "--"; paths after it are kept).
        end = rest.index("--") if "--" in rest else len(rest)
        rest = [a for a in rest[:end] if a not in _REENABLE] + rest[end:]
    return [*_SAFE_ARGV, *args[: i + 1], *flags, *rest]


def _command(args: Sequence[str]) -> str:
    i = _subcommand(args)
    return args[i] if i < len(args) else ""


def _env_for(args: Sequence[str], extra: dict[str, str] | None) -> dict[str, str]:
    env = git_env(extra)
    if _command(args) == "clone" and not (extra and "GIT_ALLOW_PROTOCOL" in extra):
        env["GIT_ALLOW_PROTOCOL"] = "file"  # vimesync clones only local repositories it built
    return env


def _message(repo: Path, args: Sequence[str], stderr: bytes) -> str:
    cmd = _command(args) or "(no command)"
    msg = stderr.decode("utf-8", "replace").strip()[:_MAX_MESSAGE] or f"git {cmd} failed"
    return f"{repo}: git {cmd}: {msg}"


# ---------------------------------------------------------------------------------------------
# Inspecting a repository before its first use

_PARTIAL = re.compile(r"^(extensions\.partialclone|remote\..+\.(promisor|partialclonefilter))$")
_DRIVER_COMMAND = re.compile(r"^(filter\..+\.(clean|smudge|process)|merge\..+\.driver)$")
# Verdicts: (cwd, ceiling) -> the git dir's common dir and a stamp of the files that decide; a
# repository whose config or alternates change (tests, the demo) is inspected again.
# What ``git lfs install --local`` (actions/checkout with lfs: true) writes: run only by commands
# that convert between work tree and objects, which vimesync never runs in such a repository.
_GIT_LFS = {
    "filter.lfs.clean": "git-lfs clean -- %f",
    "filter.lfs.smudge": "git-lfs smudge -- %f",
    "filter.lfs.process": "git-lfs filter-process",
}
_checked: dict[tuple[str, str], tuple[Path, tuple[object, ...]]] = {}


def refused_key(key: str, value: str | None, *, git_dir: Path, cwd: Path) -> str | None:
    """Why ``key`` (as ``git config --list`` names it) makes a repository unusable, or None."""
    name = key.lower() if key.count(".") < 2 else _fold(key)
    if _PARTIAL.match(name):
        return "lazy fetching (a partial clone) runs commands to fetch missing objects"
    if _DRIVER_COMMAND.match(name) and _GIT_LFS.get(name) != value:
        return "it names a command git would run"
    if name == "core.worktree" and value is not None:
        tree = (git_dir / value).resolve()
        here = cwd.resolve()
        if tree != here and tree not in here.parents:
            return "it points the work tree outside the repository"
    return None


def _fold(key: str) -> str:
    # Section and variable names are case-insensitive, the subsection in between is not.
    section, _, rest = key.partition(".")
    sub, _, var = rest.rpartition(".")
    return f"{section.lower()}.{sub}.{var.lower()}"


def parse_config_list(out: bytes) -> Iterator[tuple[str, str, str | None]]:
    """(scope, key, value or None) from ``git config --list -z --show-scope``."""
    toks = out.split(b"\0")
    for scope, entry in zip(toks[0::2], toks[1::2], strict=False):
        key, nl, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        yield scope.decode(), key, value if nl else None


def _outside_alternate(objects: Path, root: Path, depth: int = 0) -> Path | None:
    """The first alternate object store (followed as git does, 5 deep) outside ``root``."""
    try:
        lines = (objects / "info" / "alternates").read_bytes().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return None
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        alt = (objects / line.strip()).resolve()
        if not alt.is_relative_to(root):
            return alt
        if depth < 5 and (deeper := _outside_alternate(alt, root, depth + 1)) is not None:
            return deeper
    return None


def inspect_repository(cwd: Path, extra: dict[str, str] | None = None) -> None:
    """GitError naming the repository and the key when its config could make git run a command
    (see the module docstring); nothing when ``cwd`` is not in a repository. Cached per git dir."""
    slot = (str(cwd), (extra or {}).get("GIT_CEILING_DIRECTORIES", ""))
    if (seen := _checked.get(slot)) is not None and _stamp(seen[0]) == seen[1]:
        return
    env = git_env(extra)

    def query(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*_SAFE_ARGV, *args], cwd=cwd, capture_output=True, env=env, check=False)

    try:
        dirs = query(["rev-parse", "--absolute-git-dir", "--git-common-dir"])
    except (FileNotFoundError, NotADirectoryError):
        return  # the command itself says what is wrong
    if dirs.returncode != 0:
        return  # not a repository (yet): nothing to inspect
    lines = dirs.stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) < 2:
        return
    git_dir, common = Path(lines[0]), (cwd / lines[1]).resolve()
    stamp = _stamp(common)
    if not any(c == common and s == stamp for c, s in _checked.values()):
        listed = query(["config", "--list", "-z", "--show-scope"])
        if listed.returncode != 0:
            raise GitError(_message(cwd, ["config"], listed.stderr))
        for scope, key, value in parse_config_list(listed.stdout):
            if scope == "command":
                continue
            why = refused_key(key, value, git_dir=git_dir, cwd=cwd)
            if why:
                raise GitError(
                    f"{cwd}: refusing a repository that sets {ascii(key[:200])}: {why}",
                    hint="vimesync runs no command a repository names; use a plain clone or mirror",
                )
        alt = _outside_alternate(common / "objects", common)
        if alt is not None:
            raise GitError(
                f"{cwd}: refusing a repository whose objects/info/alternates points outside it",
                hint="use a clone that holds its own objects (git repack -a -d, then remove the file)",
            )
    _checked[slot] = (common, stamp)


def _stamp(common: Path) -> tuple[object, ...]:
    def one(path: Path) -> object:
        try:
            st = path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    return (one(common / "config"), one(common / "config.worktree"), one(common / "objects/info/alternates"))


def _guard(cwd: Path, args: Sequence[str], extra: dict[str, str] | None) -> None:
    _refuse_nul(cwd, args)
    if _command(args) not in _CREATING:
        inspect_repository(cwd, extra)


# ---------------------------------------------------------------------------------------------
# Running git


def run(
    repo: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> bytes:
    """Run ``git args`` in ``repo`` and return stdout. Raise GitError with git's message on failure."""
    try:
        _guard(repo, args, env)
        proc = subprocess.run(
            _argv(args),
            cwd=repo,
            input=input,
            capture_output=True,
            env=_env_for(args, env),
            check=False,
        )
    except FileNotFoundError as exc:
        if not repo.exists():
            raise GitError(f"{repo}: no such directory") from exc
        raise GitError("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise GitError(f"{repo}: not a directory") from exc
    if check and proc.returncode != 0:
        raise GitError(_message(repo, args, proc.stderr))
    return proc.stdout


def run_status(
    cwd: Path, args: Sequence[str], *, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``git args`` in ``cwd``; return (exit code, stdout, stderr) without raising on failure."""
    try:
        _guard(cwd, args, env)
        proc = subprocess.run(_argv(args), cwd=cwd, capture_output=True, env=_env_for(args, env), check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    return proc.returncode, proc.stdout, proc.stderr


def run_ok(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> bool:
    """True when ``git args`` exits 0 (for predicates such as ``merge-base --is-ancestor``)."""
    _guard(repo, args, env)
    proc = subprocess.run(_argv(args), cwd=repo, capture_output=True, env=_env_for(args, env), check=False)
    return proc.returncode == 0


def popen(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A long-lived ``git args`` (``fast-import``) with pipes to its stdin and stdout; stderr goes
    to a temporary file the caller reads on failure (``proc.stderr_file``). Hardened like :func:`run`."""
    _guard(repo, args, env)
    errf = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        _argv(args),
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errf,
        env=_env_for(args, env),
    )
    proc.stderr_file = errf  # type: ignore[attr-defined]
    return proc


def stream(
    repo: Path,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    deadline: float | None = None,
) -> Iterator[bytes]:
    """Yield chunks of ``git args`` stdout as it runs (one process, for long logs); ``input`` is
    written to its stdin by a helper thread, so neither side can block the other. ``deadline``
    (seconds): git is killed when it runs longer, and GitTimeout is raised after the chunks it
    wrote (hostile content can make git's own diffing take minutes)."""
    import threading

    _guard(repo, args, env)
    # stderr to a file: a chatty git must never block on a full stderr pipe we do not read yet.
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(
            _argv(args),
            cwd=repo,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errf,
            env=_env_for(args, env),
        )
        assert proc.stdout is not None
        writer = None
        if input is not None:
            stdin = proc.stdin
            assert stdin is not None

            def feed() -> None:
                try:
                    stdin.write(input)
                    stdin.close()
                except (BrokenPipeError, ValueError, OSError):
                    pass  # git stopped reading; its exit code says why

            writer = threading.Thread(target=feed, name="git-stream-stdin", daemon=True)
            writer.start()
        timer = threading.Timer(deadline, proc.kill) if deadline is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            while chunk := proc.stdout.read(1 << 16):
                yield chunk
        finally:
            proc.stdout.close()
            if proc.poll() is None and writer is not None and writer.is_alive():
                proc.kill()
            code = proc.wait()
            if timer is not None:
                timer.cancel()
            if writer is not None:
                writer.join(timeout=5)
        if timer is not None and timer.finished.is_set() and code != 0:
            raise GitTimeout(f"{repo}: git {_command(args)} ran over {deadline:g} s and was stopped")
        if code != 0:
            errf.seek(0)
            raise GitError(_message(repo, args, errf.read(_MAX_MESSAGE * 4)))


# ---------------------------------------------------------------------------------------------
# Small queries


def git_dir(path: Path) -> Path:
    """The git directory of ``path`` (a work tree or a bare repository); GitError if it is not one."""
    if not path.exists():
        raise GitError(f"{path}: no such directory")
    if not path.is_dir():
        raise GitError(f"{path}: not a directory")
    inspect_repository(path)  # a refused repository says why, not "not a git repository"
    try:
        out = run(path, ["rev-parse", "--absolute-git-dir"])
    except GitError as exc:
        raise GitError(f"{path}: not a git repository") from exc
    return Path(out.decode().strip())


def is_repo(path: Path) -> bool:
    """True when ``path`` is in a repository git would read (see :func:`git_dir`)."""
    try:
        git_dir(path)
    except GitError:
        return False
    return True


def resolve(repo: Path, rev: str, *, kind: str = "commit") -> str:
    """The full sha of ``rev`` peeled to ``kind``; GitError naming the rev when unknown."""
    if not rev or rev.startswith("-"):
        raise GitError(f"{repo}: {rev!r} is not a revision")
    out = run(
        repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{{kind}}}"], check=False
    )
    sha = out.decode().strip()
    if len(sha) != 40:
        if not is_repo(repo):  # say that, not "unknown revision 'HEAD'" (run in /tmp, say)
            raise GitError(f"{repo}: not a git repository")
        raise GitError(f"{repo}: unknown revision {rev!r}")
    return sha


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    return run_ok(repo, ["merge-base", "--is-ancestor", ancestor, descendant])


@dataclass(frozen=True)
class TreeEntry:
    mode: int  # e.g. 0o100644, 0o100755, 0o120000 (symlink), 0o160000 (submodule)
    kind: str  # "blob", "tree", "commit"
    oid: str
    size: int  # -1 when git does not report one (submodules)
    path: str


def parse_ls_tree(out: bytes) -> list[TreeEntry]:
    """Parse ``git ls-tree -r -z --long`` output."""
    entries = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, oid, size = meta.split()
        entries.append(
            TreeEntry(
                mode=int(mode, 8),
                kind=kind.decode(),
                oid=oid.decode(),
                size=int(size) if size != b"-" else -1,
                path=path.decode("utf-8", "surrogateescape"),
            )
        )
    return entries


def ls_tree(repo: Path, rev: str, paths: Sequence[str] = ()) -> list[TreeEntry]:
    args = ["ls-tree", "-r", "-z", "--long", "--full-tree", rev]
    if paths:
        args += ["--", *paths]
    return parse_ls_tree(run(repo, args))


def _cat_file_batch(repo: Path) -> subprocess.Popen[bytes]:
    """``git cat-file --batch`` in ``repo``, guarded like every call: requests on stdin."""
    _guard(repo, ["cat-file"], None)
    return subprocess.Popen(
        _argv(["cat-file", "--batch"]),
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(),
    )


class CatFile:
    """A long-lived ``git cat-file --batch`` for reading many blobs through one process."""

    def __init__(self, repo: Path) -> None:
        self._proc = _cat_file_batch(repo)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self.repo = repo

    def read(self, oid: str, *, max_size: int | None = None, head: int | None = None) -> bytes:
        """The object's content. With ``max_size``: GitError (bad input) for a larger object; with
        ``head``: its first ``head`` bytes only. What is not returned is skipped in chunks, never held."""
        self._in.write(oid.encode() + b"\n")
        self._in.flush()
        header = self._out.readline()
        if header.endswith(b" missing\n") or not header:
            raise GitError(f"{self.repo}: object {oid} is missing")
        size = int(header.split()[2])
        if max_size is not None and size > max_size:
            self._skip(size + 1)  # the content and its LF
            raise GitError(f"{self.repo}: object {oid} is {size:,} bytes, more than the {max_size:,} allowed")
        keep = size if head is None else min(size, head)
        data = self._out.read(keep)
        self._skip(size - keep + 1)  # the rest, and the LF after each object
        return data

    def _skip(self, left: int) -> None:
        while left > 0:
            chunk = self._out.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._in.close()
            self._proc.wait()
        self._out.close()

    def __enter__(self) -> CatFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# Reading a pinned source through git objects


def repo_at(path: Path) -> Path | None:
    """The git directory when ``path`` itself is a repository (a work tree root or a bare repository).

    Unlike :func:`git_dir`, a directory *inside* some work tree is not a repository here: the
    discovery is stopped at ``path`` (GIT_CEILING_DIRECTORIES), so ``--source some/subdir`` is read
    as a plain directory rather than as the enclosing repository.
    """
    path = path.absolute()
    if not path.is_dir():
        return None
    extra = {"GIT_CEILING_DIRECTORIES": str(path.parent)}
    _guard(path, ["rev-parse"], extra)
    out = subprocess.run(
        _argv(["rev-parse", "--absolute-git-dir", "--is-bare-repository", "--show-cdup"]),
        cwd=path,
        capture_output=True,
        env=git_env(extra),
        check=False,
    )
    if out.returncode != 0:
        return None
    # Split on LF only: splitlines() also splits at a CR, which a folder name may hold.
    lines = out.stdout.decode("utf-8", "surrogateescape").split("\n")
    gitdir = Path(lines[0])
    bare = len(lines) > 1 and lines[1] == "true"
    # --show-cdup is empty at a work tree root; a bare repo must be the path itself (not e.g. path/refs).
    if bare:
        return gitdir if gitdir.resolve() == path.resolve() else None
    cdup = lines[2] if len(lines) > 2 else ""
    return gitdir if cdup == "" else None


def cat_blobs(repo: Path, oids: Sequence[str]) -> Iterator[tuple[str, bytes]]:
    """Yield ``(oid, content)`` for each oid, in order, through one ``git cat-file --batch``.

    Requests are written by a helper thread so that git never blocks on a full stdout pipe while
    we are still writing its stdin (the pipelined form of :class:`CatFile`, for thousands of blobs).
    """
    import threading

    if not oids:
        return
    proc = _cat_file_batch(repo)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def feed() -> None:
        try:
            stdin.write(b"".join(oid.encode() + b"\n" for oid in oids))
            stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass  # git died or we stopped reading; the reader reports it

    writer = threading.Thread(target=feed, name="cat-blobs", daemon=True)
    writer.start()
    try:
        for oid in oids:
            header = stdout.readline()
            if not header or header.endswith(b" missing\n"):
                raise GitError(f"{repo}: object {oid} is missing")
            size = int(header.split()[2])
            data = stdout.read(size)
            if len(data) != size:
                raise GitError(f"{repo}: git cat-file ended early reading {oid}")
            stdout.read(1)  # the LF after each object
            yield oid, data
    finally:
        stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        writer.join(timeout=5)
