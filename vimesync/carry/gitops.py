"""The git plumbing a carry runs in the downstream: a temporary index, trees, commits, the sync
branch and its linked worktree. Everything through ``vimesync.git`` (hooks, filters and command
config disarmed); commits are made with ``commit-tree`` and ``update-ref`` (no hook runs), a
branch is only ever created (never forced) or moved forward from the value we left it at."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from vimesync import git
from vimesync.carry.memtree import Leaf
from vimesync.carry.merge import MergeConflict
from vimesync.errors import BadInput, GitError
from vimesync.safefs import remove_tree

NULL_OID = "0" * 40


class Index:
    """A temporary index file (GIT_INDEX_FILE) in ``scratch``, starting at ``tree``."""

    def __init__(self, repo: Path, scratch: Path, tree: str) -> None:
        self.repo = repo
        self.env = {"GIT_INDEX_FILE": str(scratch / "carry-index")}
        git.run(repo, ["read-tree", tree], env=self.env)

    def update(self, updates: dict[str, Leaf | None]) -> None:
        if updates:
            git.run(
                self.repo, ["update-index", "-z", "--index-info"], input=index_info(updates), env=self.env
            )

    def write_tree(self) -> str:
        return git.run(self.repo, ["write-tree"], env=self.env).decode().strip()

    def reset(self, tree: str) -> None:
        git.run(self.repo, ["read-tree", tree], env=self.env)


def index_info(updates: dict[str, Leaf | None]) -> bytes:
    out = []
    for path, e in updates.items():
        p = path.encode("utf-8", "surrogateescape")
        if e is None:
            out.append(b"0 " + NULL_OID.encode() + b"\t" + p + b"\0")
        else:
            kind = "commit" if e.mode == 0o160000 else "blob"
            out.append(f"{e.mode:o} {kind} {e.oid}\t".encode() + p + b"\0")
    return b"".join(out)


def tree_of(repo: Path, rev: str) -> str:
    return git.resolve(repo, rev, kind="tree")


def commit_tree(repo: Path, tree: str, parents: Iterable[str], message: str, env: dict[str, str]) -> str:
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return git.run(repo, args, input=message.encode("utf-8"), env=env).decode().strip()


def check_branch_name(repo: Path, name: str) -> str:
    if not name or name.startswith("-") or not git.run_ok(repo, ["check-ref-format", "--branch", name]):
        raise BadInput(f"--branch {name!r}: not a valid branch name")
    return f"refs/heads/{name}"


def ref_exists(repo: Path, ref: str) -> bool:
    return git.run_ok(repo, ["show-ref", "--verify", "--quiet", ref])


def create_branch(repo: Path, ref: str, commit: str) -> None:
    """Create ``ref`` at ``commit``; refuse (never overwrite) when it exists."""
    # An empty old value makes update-ref fail if the ref exists: never rewrites a branch.
    try:
        git.run(repo, ["update-ref", "-m", "vimesync carry: start", ref, commit, ""])
    except GitError as exc:
        raise BadInput(
            f"branch {ref.removeprefix('refs/heads/')} already exists;"
            " vimesync carry never rewrites a branch",
            hint="pass --branch NAME, or delete that branch",
        ) from exc


def move_branch(repo: Path, ref: str, new: str, old: str) -> None:
    """Move our branch from ``old`` to ``new``; GitError when someone else moved it meanwhile."""
    git.run(repo, ["update-ref", "-m", "vimesync carry", ref, new, old])


def branch_at(repo: Path, ref: str) -> str | None:
    out = git.run(repo, ["rev-parse", "--verify", "--quiet", ref], check=False).decode().strip()
    return out or None


def add_worktree(repo: Path, path: Path, branch: str) -> None:
    git.run(repo, ["worktree", "add", "--quiet", str(path), branch])


def open_worktree(repo: Path, path: Path, branch: str) -> None:
    """The carry's worktree at the tip of ``branch``: added, or, when a carry interrupted after
    adding it left it (git lists it with the branch checked out), its index and files reset to
    the branch (``worktree add`` may have been stopped half-way through its checkout)."""
    ref = f"refs/heads/{branch}"
    if worktrees(repo).get(Path(os.path.abspath(path))) != ref:
        add_worktree(repo, path, branch)
        return
    admin = git.run(path, ["rev-parse", "--absolute-git-dir"]).decode().strip()
    if admin in {str(a) for a in worktree_admin_dirs(repo, path)}:
        try:  # left by the checkout we stopped: no git runs in our worktree but ours
            os.unlink(os.path.join(admin, "index.lock"))
        except FileNotFoundError:
            pass
    reset_to(path, tree_of(repo, ref))


def remove_worktree(repo: Path, path: Path) -> None:
    code, _, _ = git.run_status(repo, ["worktree", "remove", "--force", "--force", str(path)])
    if code != 0:
        # The folder is gone (or was never made): drop git's record of it, only this one.
        for admin in worktree_admin_dirs(repo, path):
            remove_tree(admin)


def worktrees(repo: Path) -> dict[Path, str | None]:
    """Every worktree git knows of the repository: its folder -> the branch it has checked out
    (a full ref; None when detached or bare)."""
    out = git.run(repo, ["worktree", "list", "--porcelain", "-z"])
    found: dict[Path, str | None] = {}
    current: Path | None = None
    for field in out.split(b"\0"):
        text = field.decode("utf-8", "surrogateescape")
        if text.startswith("worktree "):
            current = Path(os.path.abspath(text[len("worktree ") :]))
            found[current] = None
        elif text.startswith("branch ") and current is not None:
            found[current] = text[len("branch ") :]
    return found


def main_repository(repo: Path) -> Path:
    """The repository's main worktree (git lists it first), else its common git dir (a bare
    repository): a path that survives removing any linked worktree, ``repo`` included."""
    out = git.run(repo, ["worktree", "list", "--porcelain", "-z"])
    fields = out.split(b"\0\0")[0].split(b"\0")
    first = fields[0].decode("utf-8", "surrogateescape")
    if first.startswith("worktree ") and b"bare" not in fields:
        path = Path(os.path.abspath(first[len("worktree ") :]))
        if path.is_dir():
            return path
    return git.common_dir(repo)


def worktree_admin_dirs(repo: Path, path: Path) -> list[Path]:
    """The ``.git/worktrees/<id>`` folders whose gitdir file points into ``path``."""
    base = git.common_dir(repo) / "worktrees"
    found = []
    if base.is_dir():
        for admin in base.iterdir():
            try:
                gitdir = (admin / "gitdir").read_text().strip()
            except OSError:
                continue
            if Path(gitdir).parent == path.resolve():
                found.append(admin)
    return found


def delete_branch(repo: Path, ref: str, expected: str | None = None) -> None:
    args = ["update-ref", "-d", ref] + ([expected] if expected else [])
    git.run(repo, args, check=False)


def two_way(worktree: Path, old: str, new: str) -> None:
    """Move the worktree's index and files from tree ``old`` to tree ``new`` (``read-tree -m -u``:
    refuses to overwrite local changes)."""
    git.run(worktree, ["read-tree", "-m", "-u", old, new])


def reset_to(worktree: Path, tree: str) -> None:
    """Index and tracked files back to ``tree`` (conflict stages dropped)."""
    git.run(worktree, ["read-tree", "--reset", "-u", tree])


def stage_conflicts(worktree: Path, conflicts: list[MergeConflict]) -> None:
    """Put each conflict in the worktree as git leaves one: the file (with markers, or the side
    that exists) in the work tree, stages 1/2/3 in the index."""
    shown = {
        c.path: c.worktree for c in conflicts if c.worktree is not None and not c.why.startswith("directory")
    }
    if shown:
        git.run(worktree, ["update-index", "-z", "--index-info"], input=index_info(dict(shown)))
        paths = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in shown)
        git.run(worktree, ["checkout-index", "-f", "-z", "--stdin"], input=paths)
    lines = []
    for c in conflicts:
        if c.why.startswith("directory"):
            continue
        p = c.path.encode("utf-8", "surrogateescape")
        lines.append(b"0 " + NULL_OID.encode() + b"\t" + p + b"\0")
        for stage, e in c.stages:
            lines.append(f"{e.mode:o} {e.oid} {stage}\t".encode() + p + b"\0")
    if lines:
        git.run(worktree, ["update-index", "-z", "--index-info"], input=b"".join(lines))


def unmerged(worktree: Path) -> list[str]:
    out = git.run(worktree, ["ls-files", "-u", "-z"])
    paths = {rec.partition(b"\t")[2].decode("utf-8", "surrogateescape") for rec in out.split(b"\0") if rec}
    return sorted(paths)


def unstaged(worktree: Path) -> list[str]:
    git.run(worktree, ["update-index", "-q", "--refresh"], check=False)
    out = git.run(worktree, ["diff-files", "--name-only", "-z"])
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def write_tree(worktree: Path) -> str:
    return git.run(worktree, ["write-tree"]).decode().strip()


_TRAILER = re.compile(r"^Upstream-Commit:\s*([0-9a-f]{40,64})\s*$", re.M)


def upstream_commits_of(repo: Path, old: str, new: str) -> list[tuple[str, str | None]]:
    """(commit, its Upstream-Commit trailer) of ``old..new`` on the first-parent line, oldest first."""
    out = git.run(
        repo,
        [
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H%x00%(trailers:key=Upstream-Commit,valueonly)%x00",
            f"{old}..{new}",
        ],
    ).decode("utf-8", "replace")
    recs = out.split("\0")
    found = []
    for sha, trailer in zip(recs[0::2], recs[1::2], strict=False):
        sha = sha.strip()
        if sha:
            value = trailer.strip().splitlines()
            found.append((sha, value[-1].strip() if value else None))
    return found


_FORMATS: dict[str, str] = {}


def object_format(repo: Path) -> str:
    """sha1 or sha256: asked once per object store (the carry and the replay of it both ask)."""
    store = git.object_store(repo)
    if store not in _FORMATS:
        out = git.run(repo, ["rev-parse", "--show-object-format"], check=False).decode().strip()
        _FORMATS[store] = out or "sha1"
    return _FORMATS[store]
