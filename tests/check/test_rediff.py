"""Splicing re-made hunks into a patch file: every other byte kept; the result applies like git."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.trees import compare_with_git, git_diff
from vimesync.check.rediff import NewSection, Scratch, diff_hunks, splice
from vimesync.patches.diffparse import parse_patch
from vimesync.pycheck.scan import blob_oid

BASE = b"".join(b"line %d\n" % i for i in range(1, 30))
MAIL = b"From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] two files\n\nbody text\n---\n"
SIGNATURE = b"-- \n2.40.0\n\n"


def test_splice_keeps_header_other_sections_and_signature(tmp_path: Path) -> None:
    after = BASE.replace(b"line 5\n", b"five\n").replace(b"line 29\n", b"last")  # no newline at the end
    diff = git_diff({"a.txt": BASE, "b.txt": BASE}, {"a.txt": after, "b.txt": BASE + b"more\n"})
    raw = MAIL + diff + SIGNATURE
    patch = parse_patch(raw, name="p.patch", strip=1)
    moved = b"new first line\n" + BASE  # the tree the patch must now fit
    scratch_dir = tmp_path / "s"
    scratch_dir.mkdir()
    scratch = Scratch(scratch_dir)
    target = b"new first line\n" + after
    section = NewSection(diff_hunks(scratch, moved, target), blob_oid(moved), blob_oid(target))
    out = splice(raw, patch, {0: section})
    assert out.startswith(MAIL) and out.endswith(SIGNATURE)
    b_section = diff[diff.index(b"diff --git a/b.txt") :]
    assert b_section in out  # untouched, byte for byte
    assert f"index {blob_oid(moved)[:7]}..{blob_oid(target)[:7]}".encode() in out
    results = compare_with_git({"a.txt": moved, "b.txt": BASE}, [out])  # real git apply agrees
    assert results[0].ok and not results[0].offsets


def test_a_section_set_to_none_is_removed() -> None:
    diff = git_diff({"a.txt": BASE, "b.txt": BASE}, {"a.txt": BASE + b"x\n", "b.txt": BASE + b"y\n"})
    patch = parse_patch(MAIL + diff, name="p.patch", strip=1)
    out = splice(MAIL + diff, patch, {0: None})
    assert b"a.txt" not in out and out.startswith(MAIL + b"diff --git a/b.txt")


def test_files_over_the_cap_are_not_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vimesync.check import rediff

    monkeypatch.setattr(rediff, "MAX_MERGE_BYTES", 100)
    scratch = Scratch(tmp_path)
    with pytest.raises(rediff.TooBig):
        rediff.merge3(scratch, base=BASE, ours=BASE, theirs=BASE + b"x\n", labels=("a", "b", "c"))
    with pytest.raises(rediff.TooBig):
        diff_hunks(scratch, BASE, BASE + b"x\n")
    assert [p.name for p in tmp_path.iterdir()] == [".git"]  # refused before any file was written
