"""Test helpers for the applier: trees as dicts, real-git diffs, and the git-apply comparison.

A tree spec maps a path to ``bytes`` (a 100644 file), ``("x", bytes)`` (100755) or
``("l", target)`` (a symlink).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

from tests.builders.gitapply import git_apply
from tests.builders.gitrepo import commit_env
from vimesync import git
from vimesync.errors import PatchError
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import FilePatch, Hunk, HunkFailure, PatchResult
from vimesync.patches.tree import ScratchTree

Spec = dict[str, "bytes | tuple[str, bytes]"]
IDENTITY = commit_env()


def write_tree(root: Path, spec: Spec) -> None:
    """Write ``spec`` under ``root`` (which may already hold files)."""
    for name, value in spec.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, tuple):
            kind, data = value
            if kind == "l":
                os.symlink(data, p)
                continue
            p.write_bytes(data)
            p.chmod(0o755)
        else:
            p.write_bytes(value)
            p.chmod(0o644)


def snapshot(root: Path) -> dict[str, tuple[str, bytes]]:
    """Everything git apply could have changed: files (content, exec bit), symlinks, dirs."""
    out: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", os.fsencode(os.readlink(full)))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", b"")
            else:
                out[rel] = ("x" if st.st_mode & 0o100 else "f", Path(full).read_bytes())
    return out


_DIFF_REPO: list[Path] = []


def _diff_repo() -> Path:
    # One scratch repository per process: git init and commits dominate the cost otherwise.
    if not _DIFF_REPO:
        repo = Path(tempfile.mkdtemp(prefix="vimesync-diff-"))
        atexit.register(shutil.rmtree, repo, True)
        git.run(repo, ["init", "-q", "--template="])
        _DIFF_REPO.append(repo)
    return _DIFF_REPO[0]


def _stage(repo: Path, spec: Spec) -> None:
    for entry in repo.iterdir():
        if entry.name != ".git":
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    (repo / ".git" / "index").unlink(missing_ok=True)
    write_tree(repo, spec)
    git.run(repo, ["add", "-A"])


def git_diff(before: Spec, after: Spec, *, extra: tuple[str, ...] = ("-M", "-C", "--binary")) -> bytes:
    """The ``git diff`` that turns tree ``before`` into tree ``after`` (real git)."""
    repo = _diff_repo()
    _stage(repo, before)
    tree = git.run(repo, ["write-tree"]).decode().strip()
    _stage(repo, after)
    return git.run(repo, ["diff", "--cached", *extra, tree])


def compare_with_git(start: Spec, patches: list[bytes], *, strip: int = 1) -> list[PatchResult]:
    """Apply ``patches`` one by one with the builtin applier and with ``git apply``; assert the
    same verdict per patch and the same tree after each. Returns the builtin results."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        mine, ref = Path(tmp, "mine"), Path(tmp, "ref")
        mine.mkdir()
        ref.mkdir()
        write_tree(mine, start)
        write_tree(ref, start)
        tree = ScratchTree(mine)
        for i, data in enumerate(patches):
            path = Path(tmp, f"{i}.patch")
            path.write_bytes(data)
            ok, err = git_apply(ref, path, strip)
            try:
                parsed = parse_patch(data, name=path.name, strip=strip)
            except PatchError as exc:  # refused before applying: git must refuse it too
                assert not ok, f"patch {i}: parser refused ({exc}) but git applied it"
                assert snapshot(mine) == snapshot(ref), f"patch {i}: trees differ"
                continue
            try:
                result = tree.apply(parsed)
            except PatchError as exc:  # unsafe (through a symlink): refused as bad input, git refuses too
                assert not ok, f"patch {i}: refused as unsafe ({exc}) but git applied it"
                assert snapshot(mine) == snapshot(ref), f"patch {i}: trees differ"
                failure = HunkFailure(file=exc.file or "", hunk=0, header="", reason=str(exc))
                results.append(PatchResult(name=path.name, ok=False, failures=(failure,)))
                continue
            assert result.ok == ok, f"patch {i}: builtin ok={result.ok} {result.failures}, git ok={ok}: {err}"
            assert snapshot(mine) == snapshot(ref), f"patch {i}: trees differ"
            results.append(result)
    return results


def hunk(old_start: int, new_start: int, lines: list[tuple[str, bytes]]) -> Hunk:
    """A hunk built by hand; counts come from the lines."""
    old_count = sum(1 for t, _ in lines if t != "+")
    new_count = sum(1 for t, _ in lines if t != "-")
    header = f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"
    return Hunk(old_start, old_count, new_start, new_count, header, tuple(lines), 0)


def modify(path: str, *hunks: Hunk, **kw: object) -> FilePatch:
    return FilePatch(old_path=path, new_path=path, hunks=tuple(hunks), **kw)  # type: ignore[arg-type]
