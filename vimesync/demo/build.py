"""Build the embedded example as real git repositories in a folder.

Everything is deterministic (fixed identities and dates), so the engine commit comes out
with exactly the sha recorded in ``data/pins/vllm.toml`` and every figure is reproducible.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.demo import story
from vimesync.errors import VimesyncError

UPSTREAM_REPO = "THUDM/slime"
EPOCH = 1_763_000_000  # fixed clock for reproducible shas


@dataclass(frozen=True)
class Demo:
    root: Path
    upstream: Path  # Slime-like upstream clone
    downstream: Path  # the sync branch's worktree (vimesync carry made it): HEAD is the sync head
    checkout: Path  # the Vime-like downstream's own checkout, on main at the baseline
    engine: Path  # bare mirror of the pinned engine
    base: str
    tip: str
    baseline: str
    head: str
    engine_rev: str


class _Clock:
    def __init__(self) -> None:
        self.t = EPOCH

    def env(self, author: str = "Slime Dev", email: str = "dev@slime.example") -> dict[str, str]:
        self.t += 3600
        date = f"{self.t} +0000"
        return {
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": author,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
        }


# The files the demo is built from, listed rather than globbed: an ordinary install byte-compiles
# the engine's .py files into __pycache__/ inside the package data (and a user's tools may leave
# anything there), which would change the engine commit and break the pinned sha.
# tests/demo/test_build.py checks that this list and the data folder agree.
ENGINE_FILES = (
    "README.md",
    "pyproject.toml",
    "vllm/__init__.py",
    "vllm/engine/__init__.py",
    "vllm/engine/llm_engine.py",
    "vllm/entrypoints/__init__.py",
    "vllm/entrypoints/openai/__init__.py",
    "vllm/entrypoints/openai/api_server.py",
    "vllm/sampling_params.py",
    "vllm/v1/__init__.py",
    "vllm/v1/metrics/__init__.py",
    "vllm/v1/metrics/stats.py",
    "vllm/v1/sample/__init__.py",
    "vllm/v1/sample/sampler.py",
    "vllm/version.py",
)
LAYOUT_FILES = (
    "vimesync.toml",
    "patches/series",
    "patches/vllm-aux-output-reset.patch",
    "patches/vllm-pull_weights.patch",
    "patches/vllm-score-centering.patch",
    "patches/vllm.patch",
    "pins/slime.toml",
    "pins/vllm.toml",
    "sop/SYNC.md",
    "sop/gates.toml",
    "sop/policy.toml",
    "sop/reviews/c3af12aa..e20141f8.toml",
)


def data_dir() -> Path:
    return Path(str(resources.files("vimesync.demo") / "data"))


def _copy_listed(src: Path, dst: Path, names: tuple[str, ...]) -> None:
    for rel in names:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / rel)


def _write(repo: Path, files: dict[str, str | bytes | None]) -> None:
    for name, content in files.items():
        path = repo / name
        if content is None:
            git.run(repo, ["rm", "-q", "--", name])
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        git.run(repo, ["add", "--", name])


def _commit(repo: Path, clock: _Clock, message: str, files: dict[str, Any] | None = None, **who: str) -> str:
    if files:
        _write(repo, files)
    git.run(repo, ["commit", "-q", "--allow-empty", "-m", message], env=clock.env(**who))
    return git.resolve(repo, "HEAD")


def _init(path: Path) -> Path:
    path.mkdir(parents=True)
    git.run(path, ["init", "-q", "--initial-branch=main"])
    return path


def build_upstream(path: Path, clock: _Clock) -> tuple[str, str]:
    """The Slime-like history; returns (BASE, TIP)."""
    repo = _init(path)
    for step in story.UPSTREAM_BEFORE:
        base = _commit(repo, clock, step["subject"], step["files"])
    landed: list[str] = []  # first-parent subjects, for reverts
    for step in story.UPSTREAM_RANGE:
        kind = step["kind"]
        if kind in ("squash", "direct"):
            message = step["subject"]
            if "revert_of" in step:
                reverted = landed[step["revert_of"]]
                message += f"\n\nThis reverts commit {git.resolve(repo, 'HEAD')}."
                assert reverted in step["subject"]
            _commit(repo, clock, message, step["files"])
            landed.append(step["subject"])
        elif kind == "rebase":
            for c in step["commits"]:
                _commit(repo, clock, c["subject"], c["files"])
                landed.append(c["subject"])
        elif kind == "merge":
            _merge_pr(repo, clock, step)
            landed.append(step["subject"])
        else:  # pragma: no cover - story data is ours
            raise ValueError(kind)
    return base, git.resolve(repo, "HEAD")


def _merge_pr(repo: Path, clock: _Clock, step: dict[str, Any]) -> None:
    """A GitHub 'merge commit' PR whose branch itself merged a PR from the contributor's fork."""
    branch = step["branch"].replace("/", "-")
    git.run(repo, ["checkout", "-q", "-b", branch])
    for c in step["commits"]:
        if "fork_merge" in c:
            sub = c["branch"].replace("/", "-")
            git.run(repo, ["checkout", "-q", "-b", sub])
            _commit(repo, clock, c["subject"], c["files"], author="Bob", email="bob@fork.example")
            git.run(repo, ["checkout", "-q", branch])
            msg = f"Merge pull request #{c['fork_merge']} from {c['branch']}\n\n{c['subject']}"
            git.run(
                repo, ["merge", "-q", "--no-ff", "-m", msg, sub], env=clock.env("Alice", "alice@fork.example")
            )
        else:
            _commit(repo, clock, c["subject"], c["files"], author="Alice", email="alice@fork.example")
    git.run(repo, ["checkout", "-q", "main"])
    msg = f"Merge pull request #{step['number']} from {step['branch']}\n\n{step['subject']}"
    git.run(repo, ["merge", "-q", "--no-ff", "-m", msg, branch], env=clock.env())


def build_engine(path: Path, clock: _Clock) -> str:
    """The pinned engine as one real commit, then mirrored bare (read through git objects only)."""
    work = _init(path.with_name(path.name + "-work"))
    _copy_listed(data_dir() / "engine", work, ENGINE_FILES)
    git.run(work, ["add", "-A"])
    _commit(work, clock, "Pinned engine source", author="vLLM", email="vllm@example.org")
    git.run(path.parent, ["clone", "-q", "--mirror", str(work), str(path)])
    shutil.rmtree(work)
    return git.resolve(path, "HEAD")


def build_downstream(path: Path, clock: _Clock, *, upstream_tip: str) -> tuple[str, str, Path]:
    """The Vime-like fork: its own layout, then the sync: ``vimesync carry`` of the applicable
    PRs onto a sync branch (in its linked worktree), and the Vime-native overlay the maintainer
    added on top. Returns (baseline, head, the sync worktree)."""
    from vimesync.app import upstreamsteps
    from vimesync.app.flags import SyncFlags
    from vimesync.app.workspace import Workspace
    from vimesync.carry.model import CarryJob
    from vimesync.carry.run import CarryOptions, start
    from vimesync.settings import Settings
    from vimesync.upstream.policy import load_policy
    from vimesync.upstream.translate import load_transform

    repo = _init(path)
    who = {"author": "Vime Maintainer", "email": "maintainers@vime.example"}
    _commit(repo, clock, "Import Slime as Vime on vLLM", story.DOWNSTREAM_BASELINE_FILES, **who)
    _install_layout(repo)
    _commit(repo, clock, "Add the vimesync layout: patches, pins, sop", None, **who)
    for step in story.DOWNSTREAM_BEFORE_SYNC:
        baseline = _commit(repo, clock, f"{step['subject']}\n\n{step['body']}", step["files"], **who)
    # The upstream is named as a flag would name it: the demo built it, so it is trusted even in
    # an untrusted (CI) session, where a location the checkout's config names outside it is not.
    upstream = path.parent / "slime"
    flags = SyncFlags(config=repo / "vimesync.toml", upstream=upstream, downstream=repo)
    ws = Workspace.resolve(flags, Settings.of({}), engines=False, cwd=repo)
    cfg = ws.config
    walked = upstreamsteps.walk(ws, at=git.resolve(repo, "HEAD"))
    policy = load_policy(ws.policy) if ws.policy else None
    options = CarryOptions()
    result = start(
        repo,
        cfg,
        load_transform(cfg),
        options,
        walked,
        policy,
        upstream=upstream,
        job=CarryJob(clock.env(**who)),
    )
    if result.status != "done" or result.worktree is None:  # pragma: no cover - the story is ours
        raise VimesyncError(f"demo: the carry stopped ({result.status}): {result.conflict}")
    worktree = Path(result.worktree)
    sync = story.DOWNSTREAM_SYNC
    head = _commit(worktree, clock, f"{sync['subject']}\n\n{sync['body']}", sync["files"], **who)
    return baseline, head, worktree


def _install_layout(repo: Path) -> None:
    """Copy the shipped patches/, pins/ and sop/ into the downstream and stage them."""
    _copy_listed(data_dir(), repo, LAYOUT_FILES)
    git.run(repo, ["add", "-A"])


def build_demo(root: Path) -> Demo:
    """Build upstream, engine and downstream under ``root`` (which must not exist or be empty)."""
    if root.exists() and any(root.iterdir()):
        raise VimesyncError(f"{root}: not empty; the demo builds in a fresh folder")
    root.mkdir(parents=True, exist_ok=True)
    clock = _Clock()
    engine_rev = build_engine(root / "vllm.git", clock)
    base, tip = build_upstream(root / "slime", clock)
    baseline, head, sync = build_downstream(root / "vime", clock, upstream_tip=tip)
    return Demo(
        root=root,
        upstream=root / "slime",
        downstream=sync,
        checkout=root / "vime",
        engine=root / "vllm.git",
        base=base,
        tip=tip,
        baseline=baseline,
        head=head,
        engine_rev=engine_rev,
    )
