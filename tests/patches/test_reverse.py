"""Already-applied patches: a failed patch is tried in reverse, and the verdicts agree with
``git apply -R --check`` (per patch and per hunk) and GNU ``patch --dry-run``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders.gitapply import git_apply
from tests.builders.trees import Spec, git_diff, write_tree
from vimesync import git
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import PatchFile
from vimesync.patches.reverse import reverse_patch
from vimesync.patches.tree import ScratchTree, apply_stack

BASE = b"".join(b"line %d\n" % i for i in range(1, 41))


def edit(data: bytes, *changes: tuple[int, bytes]) -> bytes:
    lines = data.splitlines(keepends=True)
    for n, new in changes:
        lines[n - 1] = new
    return b"".join(lines)


def git_reverse_check(root: Path, patch: Path) -> bool:
    env = {"GIT_CEILING_DIRECTORIES": str(root.parent), "XDG_CONFIG_HOME": os.devnull}
    code, _, _ = git.run_status(root, ["apply", "-R", "--check", "-p1", str(patch)], env=env)
    return code == 0


def one_hunk_patches(data: bytes) -> list[bytes]:
    """Split a one-file patch into one patch per hunk (the per-hunk reference)."""
    head, *hunks = data.split(b"\n@@")
    return [head + b"\n@@" + h + (b"" if h.endswith(b"\n") else b"\n") for h in hunks]


def check(tmp_path: Path, tree: Spec, data: bytes, *, keep_going: bool = False) -> tuple[PatchFile, Path]:
    root = tmp_path / "tree"
    root.mkdir()
    write_tree(root, tree)
    (tmp_path / "p.patch").write_bytes(data)
    return parse_patch(data, name="p.patch", strip=1), root


def test_a_patch_applied_twice_is_already_applied_like_git_and_gnu_patch(tmp_path: Path) -> None:
    after = edit(BASE, (5, b"five\n"), (30, b"thirty\n"))
    data = git_diff({"a.txt": BASE}, {"a.txt": after})
    patch, root = check(tmp_path, {"a.txt": after}, data)
    result = ScratchTree(root).apply(patch)
    assert not result.ok and result.reverse_applies
    assert result.status == "already-applied"
    assert result.already_applied == (("a.txt", 1), ("a.txt", 2))
    assert git_reverse_check(root, tmp_path / "p.patch")
    assert not git_apply(root, tmp_path / "p.patch", 1)[0]
    if shutil.which("patch"):
        gnu = subprocess.run(
            ["patch", "--dry-run", "-N", "-p1", "-i", str(tmp_path / "p.patch")],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert "Reversed (or previously applied)" in gnu.stdout
    assert (root / "a.txt").read_bytes() == after  # nothing written


def test_partly_applied_names_the_hunks_git_reverse_applies(tmp_path: Path) -> None:
    after = edit(BASE, (5, b"five\n"), (30, b"thirty\n"))
    data = git_diff({"a.txt": BASE}, {"a.txt": after})
    # the tree has the first change, and the second hunk's context moved on upstream
    tree = edit(BASE, (5, b"five\n"), (29, b"twenty-nine, changed\n"))
    patch, root = check(tmp_path, {"a.txt": tree}, data)
    result = ScratchTree(root).apply(patch)
    assert result.status == "partly-applied"
    assert result.already_applied == (("a.txt", 1),)
    assert not git_reverse_check(root, tmp_path / "p.patch")
    for nth, single in enumerate(one_hunk_patches(data), 1):
        path = tmp_path / f"h{nth}.patch"
        path.write_bytes(single)
        assert git_reverse_check(root, path) == (("a.txt", nth) in result.already_applied)


def test_a_failing_patch_not_in_the_tree_is_failed(tmp_path: Path) -> None:
    after = edit(BASE, (5, b"five\n"))
    data = git_diff({"a.txt": BASE}, {"a.txt": after})
    patch, root = check(tmp_path, {"a.txt": edit(BASE, (6, b"six, changed\n"))}, data)
    result = ScratchTree(root).apply(patch)
    assert result.status == "failed" and not result.already_applied
    assert not git_reverse_check(root, tmp_path / "p.patch")


def test_a_pure_deletion_that_applies_is_not_taken_for_applied(tmp_path: Path) -> None:
    # reversed, a deletion's context alone matches an untouched file: only failed hunks count
    after = edit(BASE, (5, b""))
    other = edit(BASE, (30, b"thirty\n"))
    before_tree = {"a.txt": BASE, "b.txt": BASE}
    data = git_diff(before_tree, {"a.txt": after, "b.txt": other})
    patch, root = check(tmp_path, {"a.txt": BASE, "b.txt": edit(BASE, (31, b"x\n"))}, data)
    result = ScratchTree(root).apply(patch)
    assert result.status == "failed"
    assert result.already_applied == ()


@pytest.mark.parametrize("kind", ["create", "delete"])
def test_created_and_deleted_files(tmp_path: Path, kind: str) -> None:
    before: Spec = {"keep.txt": BASE} if kind == "create" else {"keep.txt": BASE, "gone.txt": BASE}
    after: Spec = {"keep.txt": BASE, "new.txt": BASE} if kind == "create" else {"keep.txt": BASE}
    data = git_diff(before, after)
    patch, root = check(tmp_path, after, data)
    result = ScratchTree(root).apply(patch)
    assert result.status == "already-applied"
    assert git_reverse_check(root, tmp_path / "p.patch")


def test_reverse_twice_is_the_patch() -> None:
    data = git_diff({"a.txt": BASE}, {"a.txt": edit(BASE, (5, b"five\n")), "n.txt": b"x\n"})
    patch = parse_patch(data, name="p", strip=1)
    assert reverse_patch(reverse_patch(patch)) == patch


def test_an_already_applied_patch_does_not_stop_the_stack(tmp_path: Path) -> None:
    first = edit(BASE, (5, b"five\n"))
    second = edit(first, (30, b"thirty\n"))
    p1 = parse_patch(git_diff({"a.txt": BASE}, {"a.txt": first}), name="1.patch", strip=1)
    p2 = parse_patch(git_diff({"a.txt": first}, {"a.txt": second}), name="2.patch", strip=1)
    root = tmp_path / "t"
    root.mkdir()
    write_tree(root, {"a.txt": first})  # the source already has patch 1
    results = apply_stack(root, [p1, p2])
    assert [r.status for r in results] == ["already-applied", "applied"]
    assert (root / "a.txt").read_bytes() == second
