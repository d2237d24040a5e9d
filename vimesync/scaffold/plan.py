"""What ``vimesync init`` writes, worked out from the flags and the repositories they name.

Pure planning: nothing is written here. Facts that can be read from the repositories are read
(the upstream's owner/name from its ``origin`` remote, its branch, the last upstream commit the
downstream already holds, the engine clone's full sha); what cannot be told is left as a
commented example and said in a note.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from vimesync import git
from vimesync.config import parse_map
from vimesync.errors import BadInput, GitError
from vimesync.report.links import github_repo_of
from vimesync.safefs import excerpt
from vimesync.scaffold import templates
from vimesync.scaffold.facts import EngineFacts, UpstreamFacts
from vimesync.upstream.translate import load_map

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
_OWNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")
_SHA = re.compile(r"[0-9a-f]{40}")
_ARCHIVE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar)$", re.IGNORECASE)
MAX_FIRST_PARENTS = 20_000  # upstream commits searched for the newest one the downstream holds
MAX_ANCESTRY_CHECKS = 64  # of those present, how many are tested for being in the downstream's history


@dataclass(frozen=True)
class InitOptions:
    downstream: Path  # the repository root the files go into
    upstream: str | None = None  # a local clone/mirror path or a URL, as given
    upstream_repo: str | None = None
    maps: tuple[str, ...] = ()
    engine: str | None = None
    engine_repo: str | None = None
    rev: str | None = None
    source: Path | None = None


@dataclass(frozen=True)
class ScaffoldPlan:
    files: tuple[tuple[str, str], ...]  # (path relative to the downstream, text)
    notes: tuple[str, ...]  # what was found, and what could not be told
    next_commands: tuple[str, ...]


def _key(name: str) -> str:
    """A file-name-safe lower-case key: ``SGLang`` -> ``sglang``."""
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.") or "engine"


def _rel(path: Path, start: Path) -> str:
    """``path`` relative to ``start`` when it lies inside or beside it (``../slime``), else absolute:
    ``../../../work/real/x.whl`` says less than ``/work/real/x.whl``."""
    rel = Path(os.path.relpath(os.path.abspath(path), os.path.abspath(start))).as_posix()
    return os.path.abspath(path) if rel.startswith("../../") else rel


def _owner_name(value: str | None, flag: str) -> str | None:
    if value is not None and not _OWNER_NAME.fullmatch(value):
        raise BadInput(f"{flag} {value!r}: expected owner/name, e.g. THUDM/slime")
    return value


def _branch(up: Path) -> str | None:
    """The branch whose tip is the upstream: the remote-tracking one a ``git fetch`` updates when
    the clone has it (``origin/main``), else the checked-out branch (a bare mirror's ``main``)."""
    head = git.run(up, ["symbolic-ref", "-q", "--short", "HEAD"], check=False).decode().strip()
    if not head:
        return None
    if git.run_ok(up, ["rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{head}"]):
        return f"origin/{head}"
    return head


def _synced(down: Path, up: Path, tip: str, notes: list[str]) -> str | None:
    """The newest commit on the upstream's first-parent line that the downstream holds (its merge
    base with the tip when the downstream is a fork), or None when it cannot tell."""
    if not git.is_repo(down) or not git.run_ok(down, ["rev-parse", "--verify", "--quiet", "HEAD"]):
        notes.append("the downstream has no commit yet: set [upstream] synced in the pin by hand")
        return None
    if git.run_ok(down, ["cat-file", "-e", f"{tip}^{{commit}}"]):
        out = git.run(down, ["merge-base", "HEAD", tip], check=False).decode().strip()
        return out if _SHA.fullmatch(out) else None
    line = (
        git.run(up, ["rev-list", "--first-parent", f"--max-count={MAX_FIRST_PARENTS}", tip]).decode().split()
    )
    if not line:
        return None
    found = git.run(down, ["cat-file", "--batch-check"], input="\n".join(line).encode() + b"\n").decode()
    present = [
        sha for sha, answer in zip(line, found.splitlines(), strict=False) if not answer.endswith("missing")
    ]
    for sha in present[:MAX_ANCESTRY_CHECKS]:  # objects fetched but not merged are skipped
        if git.is_ancestor(down, sha, "HEAD"):
            return sha
    notes.append(
        f"the downstream holds none of the last {len(line)} upstream commits: "
        "set [upstream] synced in the pin to the last upstream commit carried"
    )
    return None


def _upstream(opts: InitOptions, notes: list[str]) -> UpstreamFacts:
    repo = _owner_name(opts.upstream_repo, "--upstream-repo")
    if opts.upstream is None:
        notes.append("no --upstream: [upstream] path is a commented example")
        return UpstreamFacts(_display(repo, None), repo, None, None, None, None)
    if _URL.match(opts.upstream):
        repo = repo or github_repo_of(opts.upstream)
        notes.append(f"--upstream is a URL: clone it (git clone {opts.upstream}) and set [upstream] path")
        return UpstreamFacts(_display(repo, opts.upstream), repo, None, opts.upstream, None, None)
    up = Path(opts.upstream)
    if not git.is_repo(up):
        raise BadInput(f"--upstream {opts.upstream}: not a git repository (a clone or bare mirror)")
    if repo is None:
        url = git.run(up, ["config", "--get", "remote.origin.url"], check=False).decode().strip()
        repo = github_repo_of(url) if url else None
    if repo is None:
        notes.append(
            f"{opts.upstream} has no github.com origin remote: [upstream] repo is a commented example, and "
            "the name comes from the folder (pass --upstream-repo OWNER/NAME to set both)"
        )
    branch = _branch(up)
    tip = branch or "HEAD"
    try:
        tip_sha = git.resolve(up, tip)
    except GitError:
        notes.append(f"{opts.upstream} has no commit at {tip}: set [upstream] synced by hand")
        tip_sha = None
    synced = _synced(opts.downstream, up, tip_sha, notes) if tip_sha else None
    if synced:
        notes.append(f"[upstream] synced = {synced[:12]}: the newest upstream commit the downstream holds")
    return UpstreamFacts(_display(repo, str(up)), repo, _rel(up, opts.downstream), None, branch, synced)


def _display(repo: str | None, where: str | None) -> str:
    """``THUDM/slime`` -> ``Slime``; else the clone's folder name; else ``Upstream``."""
    name = repo.partition("/")[2] if repo else None
    if not name and where:
        name = re.sub(r"\.git$", "", where.rstrip("/").rpartition("/")[2].rpartition(":")[2])
    name = name or "upstream"
    return name[:1].upper() + name[1:]


def _engine_name(opts: InitOptions) -> str | None:
    if opts.engine:
        return opts.engine
    if opts.engine_repo:
        return opts.engine_repo.partition("/")[2]
    if opts.source is not None:
        base = opts.source.name
        # sglang-0.5.15.post1-cp311-...whl -> sglang; vllm.git -> vllm
        stem = base.split("-")[0] if _ARCHIVE.search(base) else re.sub(r"\.git$", "", base)
        return stem or None
    return None


def _engine(opts: InitOptions, notes: list[str]) -> EngineFacts:
    repo = _owner_name(opts.engine_repo, "--engine-repo")
    name = _engine_name(opts)
    rev = opts.rev
    src = opts.source
    if src is not None:
        if not os.path.lexists(src):
            raise BadInput(f"--source {src}: no such file or folder")
        if git.is_repo(src) and not _ARCHIVE.search(src.name):
            try:
                rev = git.resolve(src, rev or "HEAD")
            except GitError:
                raise BadInput(
                    f"--rev {rev!r}: not a commit of --source {src}",
                    hint=f"git -C {src} fetch, or give the full sha of the engine commit",
                ) from None
            notes.append(f"[engine] rev = {rev[:12]}: {'--rev' if opts.rev else 'HEAD'} of {src}")
        elif rev is not None:
            raise BadInput(
                f"--rev {rev}: --source {src} is not a git repository",
                hint="a wheel, sdist or folder is its own exact pin: drop --rev",
            )
    elif rev is not None and not _SHA.fullmatch(rev):
        raise BadInput(
            f"--rev {rev!r}: expected the full 40-hex sha of the engine commit",
            hint="git rev-parse REV in the engine clone, or pass --source CLONE to resolve it",
        )
    if src is None:
        notes.append("no --source: pass it to `patches check`, or set [engine] source in vimesync.toml")
    digest = None
    if src is not None and _ARCHIVE.search(src.name) and os.path.isfile(src):
        from vimesync.sources.pinned import sha256_of

        digest = sha256_of(src)
        notes.append(f"[engine] sha256 = {digest[:12]}…: the digest of {src.name}, checked before every use")
    return EngineFacts(name, repo, rev, _rel(src, opts.downstream) if src is not None else None, digest)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_writable(opts: InitOptions) -> None:
    """The config refuses a control character in a path, repo or rev (docs/SECURITY.md): refuse
    to write one rather than a config that no command can read."""
    for flag, value in (
        ("--upstream", opts.upstream),
        ("--upstream-repo", opts.upstream_repo),
        ("--engine-repo", opts.engine_repo),
        ("--rev", opts.rev),
        ("--source", str(opts.source) if opts.source is not None else None),
        ("--downstream", str(opts.downstream)),
        *(("--map", m) for m in opts.maps),
    ):
        if value is not None and _CONTROL.search(value):
            raise BadInput(f"{flag} {excerpt(value)}: holds a control character, which vimesync.toml refuses")
    if opts.engine is not None and "\0" in opts.engine:
        raise BadInput("--engine: holds a NUL character")


def plan_init(opts: InitOptions) -> ScaffoldPlan:
    """The files ``vimesync init`` writes and what it could tell; BadInput for a wrong flag."""
    _check_writable(opts)
    maps = parse_map(list(opts.maps)) if opts.maps else ()
    load_map(maps, where="--map")  # the carry's own rules: a config no command could read is not written
    notes: list[str] = []
    up = _upstream(opts, notes)
    eng = _engine(opts, notes)
    up_key = _key(up.name) if up.name.lower() != "upstream" else "upstream"
    eng_key = _key(eng.name) if eng.name else "engine"
    up_pin, eng_pin = f"pins/{up_key}.toml", f"pins/{eng_key}.toml"
    if eng_pin == up_pin:  # an upstream clone named like the engine: two pins, never one file
        eng_pin = f"pins/{eng_key}-engine.toml"
        notes.append(f"the upstream and the engine are both named {up_key!r}: the engine pin is {eng_pin}")
    files = (
        (
            "vimesync.toml",
            templates.config_toml(up, eng, maps=maps, upstream_pin=up_pin, engine_pin=eng_pin),
        ),
        (up_pin, templates.upstream_pin(repo=up.repo, synced=up.synced)),
        (eng_pin, templates.engine_pin(name=eng.name, repo=eng.repo, rev=eng.rev, sha256=eng.sha256)),
        ("patches/series", templates.SERIES),
        ("sop/policy.toml", templates.POLICY),
        ("sop/gates.toml", templates.GATES),
        ("sop/SYNC.md", templates.sync_md(upstream=up.name, up_pin=up_pin, eng_pin=eng_pin, path=up.path)),
    )
    source = "" if eng.source else " --source ENGINE"
    commands = (
        _first_step(opts, up, notes),
        f"vimesync patches check{source}",
        f"vimesync report{source} --output sync.md",
        "vimesync sync",
    )
    notes.append("`vimesync sync` runs every step in one go, stopping where a human decides (sop/SYNC.md)")
    return ScaffoldPlan(files=files, notes=tuple(notes), next_commands=commands)


def _first_step(opts: InitOptions, up: UpstreamFacts, notes: list[str]) -> str:
    """The walk, as it runs with what init wrote: with the pin's ``synced``, ``vimesync walk``;
    without it (a fork with no commit yet), the whole upstream line (``--range TIP``: nothing is
    carried yet); with no upstream clone, init again once there is one (it reads ``synced``)."""
    if up.path is None:
        url = up.url or (f"https://github.com/{up.repo}.git" if up.repo else None)
        if url is None:
            notes.append("no upstream clone: init again with --upstream naming one, then run its next steps")
            return "vimesync init --force --upstream PATH"
        clone = str(opts.downstream.absolute().parent / _key(up.name))
        notes.append(f"no upstream clone: clone it to {clone} and init again, then run its next steps")
        return f"{sh('git', 'clone', url, clone)} && {_init_again(opts, clone)}"
    fetch = ""
    if (up.branch or "").startswith("origin/"):
        fetch = f"{sh('git', '-C', up.path, 'fetch', 'origin')} && "
    if up.synced is None:
        notes.append(
            "the first walk takes the upstream's whole line (--range): once [upstream] synced is set,"
            " `vimesync walk` starts after it"
        )
        return f"{fetch}vimesync walk --range {sh(up.branch or 'HEAD')}"
    return f"{fetch}vimesync walk"


def _init_again(opts: InitOptions, upstream: str) -> str:
    """``vimesync init --force`` with the flags given, ``--upstream`` the clone: each value quoted."""
    words = ["vimesync", "init", "--force", "--upstream", upstream]
    named = (
        ("--upstream-repo", opts.upstream_repo),
        ("--engine", opts.engine),
        ("--engine-repo", opts.engine_repo),
        ("--rev", opts.rev),
        ("--source", str(opts.source) if opts.source is not None else None),
    )
    words += [w for flag, value in named if value is not None for w in (flag, value)]
    words += [w for m in opts.maps for w in ("--map", m)]
    return sh(*words)


def sh(*words: str) -> str:
    """Words as one shell command line, each quoted when it needs it."""
    return " ".join(shlex.quote(w) for w in words)
