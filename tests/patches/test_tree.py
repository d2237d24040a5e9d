"""Applying whole patches to a scratch tree: every case against real ``git apply``, plus hostile
patches that must be refused without touching anything outside the tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders.gitapply import git_apply
from tests.builders.trees import compare_with_git, git_diff, hunk, snapshot, write_tree
from vimesync.errors import PatchError
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import FilePatch, PatchFile
from vimesync.patches.tree import Provider, ScratchTree, apply_patch_to_tree, apply_stack, directory_provider

BASE = {
    "pkg/__init__.py": b"",
    "pkg/mod.py": b"".join(b"x%d = %d\n" % (i, i) for i in range(40)),
    "pkg/sub/deep.py": b"deep = 1\n",
    "run.sh": ("x", b"#!/bin/sh\necho hi\n"),
    "crlf.txt": b"one\r\ntwo\r\nthree\r\n",
    "noeol.txt": b"a\nb",
    "link": ("l", b"pkg/mod.py"),
}


MOD = BASE["pkg/mod.py"]
assert isinstance(MOD, bytes)

CASES = {
    "modify": {"pkg/mod.py": MOD.replace(b"x3 = 3\n", b"x3 = 33\n").replace(b"x30 = 30\n", b"")},
    "create-in-new-dirs": {"a/b/c/new.py": b"new = 1\n", "empty.txt": b""},
    "delete-empties-dirs": {"pkg/sub/deep.py": None},
    "rename-with-hunks": {"pkg/mod.py": None, "pkg/renamed.py": MOD.replace(b"x5 = 5\n", b"x5 = 55\n")},
    "pure-rename": {"pkg/sub/deep.py": None, "elsewhere/deep.py": b"deep = 1\n"},
    "copy-with-hunks": {"pkg/copy.py": MOD.replace(b"x7 = 7\n", b"seven\n")},
    "mode-only": {"run.sh": b"#!/bin/sh\necho hi\n"},
    "new-exec": {"tool.sh": ("x", b"#!/bin/sh\n")},
    "mode-and-content": {"run.sh": b"#!/bin/sh\necho bye\n"},
    "crlf-and-noeol": {"crlf.txt": b"one\r\n2\r\nthree\r\n", "noeol.txt": b"a\nb\nc\n"},
    "symlink-retarget": {"link": ("l", b"pkg/sub/deep.py")},
    "symlink-create-delete": {"link": None, "newlink": ("l", b"../outside")},
    "file-to-symlink": {"pkg/sub/deep.py": ("l", b"../mod.py")},
    "symlink-to-file": {"link": b"now a file\n"},
    "dir-to-file": {"pkg/sub/deep.py": None, "pkg/sub": b"file now\n"},
    "swap-rename": {"pkg/__init__.py": b"deep = 1\n", "pkg/sub/deep.py": b""},
    "delete-empty-file": {"pkg/__init__.py": None},
    "file-to-dir": {"run.sh": None, "run.sh/inner.txt": b"inner\n"},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_patch_matches_git_apply(name: str) -> None:
    target = _merge(BASE, CASES[name])
    results = compare_with_git(BASE, [git_diff(BASE, target)])
    assert results[0].ok


def _merge(spec: dict, changes: dict) -> dict:
    out = dict(spec)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def test_same_file_twice_in_one_patch_matches_git() -> None:
    mid = _merge(BASE, {"pkg/mod.py": MOD.replace(b"x1 = 1\n", b"one\n")})
    end = _merge(mid, {"pkg/mod.py": MOD.replace(b"x1 = 1\n", b"ONE\n").replace(b"x20 = 20\n", b"")})
    both = git_diff(BASE, mid) + git_diff(mid, end)
    (result,) = compare_with_git(BASE, [both])
    assert result.ok and result.touched == ("pkg/mod.py",)


def test_modify_then_delete_in_one_patch_matches_git() -> None:
    mid = _merge(BASE, {"pkg/sub/deep.py": b""})
    end = _merge(mid, {"pkg/sub/deep.py": None})
    compare_with_git(BASE, [git_diff(BASE, mid) + git_diff(mid, end)])


def test_stack_of_patches_matches_git_patch_by_patch() -> None:
    one = _merge(BASE, CASES["rename-with-hunks"])
    two = _merge(one, {"pkg/renamed.py": (one["pkg/renamed.py"]).replace(b"x9 = 9\n", b"")})
    three = _merge(two, {"a/new.py": b"n\n", "run.sh": None})
    compare_with_git(BASE, [git_diff(BASE, one), git_diff(one, two), git_diff(two, three)])


def test_failed_patch_writes_nothing(tmp_path: Path) -> None:
    target = _merge(BASE, {"a/new.py": b"n\n", "pkg/mod.py": MOD.replace(b"x3 = 3\n", b"")})
    drifted = _merge(BASE, {"pkg/mod.py": MOD.replace(b"x3 = 3\n", b"x3 = -3\n")})
    write_tree(tmp_path, drifted)
    before = snapshot(tmp_path)
    result = apply_patch_to_tree(tmp_path, parse_patch(git_diff(BASE, target), name="p"))
    assert not result.ok and result.touched == ()
    assert snapshot(tmp_path) == before
    (fail,) = result.failures
    assert (fail.file, fail.hunk) == ("pkg/mod.py", 1)
    assert (fail.expected, fail.found) == ("x3 = 3\n", "x3 = -3\n")
    compare_with_git(drifted, [git_diff(BASE, target)])


def test_touched_lists_written_and_deleted_paths(tmp_path: Path) -> None:
    write_tree(tmp_path, BASE)
    target = _merge(BASE, CASES["rename-with-hunks"] | {"new.txt": b"n\n"})
    result = apply_patch_to_tree(tmp_path, parse_patch(git_diff(BASE, target), name="p"))
    assert result.ok and set(result.touched) == {"pkg/mod.py", "pkg/renamed.py", "new.txt"}
    assert result.files == 2 and result.hunks == 2


# ---------------------------------------------------------------------------------------------
# refusals: each also checked against git's verdict


def test_creating_a_file_that_exists_fails() -> None:
    patch = git_diff({}, {"pkg/mod.py": b"mine\n"})
    (r,) = compare_with_git(BASE, [patch])
    assert not r.ok and "already exists" in r.failures[0].reason


def test_deleting_with_leftover_content_fails() -> None:
    patch = git_diff({"f": b"a\n"}, {})
    (r,) = compare_with_git({"f": b"a\nb\n"}, [patch])
    assert not r.ok


def test_modifying_a_missing_file_fails() -> None:
    (r,) = compare_with_git({}, [git_diff(BASE, _merge(BASE, CASES["modify"]))])
    assert not r.ok and "No such file" in r.failures[0].reason


def test_write_through_symlink_in_tree_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    start = {"lib": ("l", os.fsencode(outside)), "ok.py": b"ok\n"}
    patch = git_diff({}, {"lib/evil.py": b"pwned\n"})
    (r,) = compare_with_git(start, [patch])
    assert not r.ok and "symbolic link" in r.failures[0].reason and "lib" in r.failures[0].reason
    assert list(outside.iterdir()) == []


def test_modify_through_symlinked_dir_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_bytes(b"a = 1\n")
    start = {"lib": ("l", os.fsencode(outside))}
    patch = git_diff({"lib/a.py": b"a = 1\n"}, {"lib/a.py": b"a = 2\n"})
    (r,) = compare_with_git(start, [patch])
    assert not r.ok and "symbolic link" in r.failures[0].reason
    assert (outside / "a.py").read_bytes() == b"a = 1\n"


def test_symlink_created_by_earlier_patch_then_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    first = git_diff({}, {"escape": ("l", os.fsencode(outside))})
    second = git_diff({}, {"escape/evil.py": b"pwned\n"})
    r1, r2 = compare_with_git({"keep": b"k\n"}, [first, second])
    assert r1.ok and not r2.ok and "escape" in r2.failures[0].reason
    assert list(outside.iterdir()) == []


def test_symlink_and_write_through_it_in_one_patch(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    both = git_diff({}, {"escape": ("l", os.fsencode(outside))}) + git_diff({}, {"escape/evil.py": b"x\n"})
    (r,) = compare_with_git({"keep": b"k\n"}, [both])
    assert not r.ok
    assert list(outside.iterdir()) == []


def test_symlink_replaced_by_directory_in_one_patch_is_allowed() -> None:
    start = {"d": ("l", b"elsewhere"), "elsewhere/x": b"x\n"}
    end = {"d/x": b"y\n", "elsewhere/x": b"x\n"}
    (r,) = compare_with_git(start, [git_diff(start, end)])
    assert r.ok


@pytest.mark.parametrize("bad", ["../evil", "/etc/passwd", "a/../../b", "a//b", ".git/config", "a/.GIT/x"])
def test_unsafe_paths_raise_patch_error(tmp_path: Path, bad: str) -> None:
    fp = FilePatch(old_path=None, new_path=bad, hunks=(hunk(0, 1, [("+", b"x\n")]),))
    with pytest.raises(PatchError, match="unsafe path"):
        apply_patch_to_tree(tmp_path, PatchFile(name="evil.patch", header=b"", files=(fp,)))
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# stacks and lazy providers


def _patches(*pairs: tuple[dict, dict]) -> list[PatchFile]:
    return [parse_patch(git_diff(a, b), name=f"{i}.patch") for i, (a, b) in enumerate(pairs)]


def test_stack_stops_at_first_failure_unless_keep_going(tmp_path: Path) -> None:
    good = _merge(BASE, CASES["modify"])
    broken = ({"nope": b"x\n"}, {"nope": b"y\n"})
    patches = _patches((BASE, good), broken, (good, _merge(good, {"z": b"z\n"})))
    write_tree(tmp_path / "a", BASE)
    results = apply_stack(tmp_path / "a", patches)
    assert [(r.ok, r.skipped) for r in results] == [(True, False), (False, False), (False, True)]
    write_tree(tmp_path / "b", BASE)
    results = apply_stack(tmp_path / "b", patches, keep_going=True)
    assert [(r.ok, r.skipped) for r in results] == [(True, False), (False, False), (True, False)]
    assert (tmp_path / "b" / "z").read_bytes() == b"z\n"


def test_lazy_provider_gives_the_same_tree(tmp_path: Path) -> None:
    full, lazy, src = tmp_path / "full", tmp_path / "lazy", tmp_path / "src"
    for d in (full, src):
        write_tree(d, BASE)
    lazy.mkdir()
    asked: list[str] = []
    from_src = directory_provider(src)

    def entry(path: str) -> tuple[bytes, int] | None:
        asked.append(path)
        return from_src.entry(path)

    provider = Provider(entry=entry, files_under=from_src.files_under)

    one = _merge(BASE, CASES["rename-with-hunks"])
    two = _merge(one, {"pkg/sub/deep.py": None, "pkg/sub/deep2.py": b"d\n"})
    three = _merge(two, {"pkg/sub/deep.py": b"back\n"})
    patches = _patches((BASE, one), (one, two), (two, three))
    r_full = apply_stack(full, patches)
    r_lazy = apply_stack(lazy, patches, provider=provider)
    assert [r.ok for r in r_full] == [r.ok for r in r_lazy] == [True, True, True]
    # Every path the stack touched is identical; nothing else was materialized.
    for path in {p for r in r_full for p in r.touched}:
        assert os.path.lexists(full / path) == os.path.lexists(lazy / path)
        if (full / path).exists():
            assert (full / path).read_bytes() == (lazy / path).read_bytes()
    assert "run.sh" not in asked and not (lazy / "run.sh").exists()


def test_a_scratch_tree_over_a_provider_starts_empty(tmp_path: Path) -> None:
    """Over a provider, a path the tree never wrote is not looked for in the scratch folder: a file
    left there would be shadowed by the source without a word, so such a folder is refused."""
    src, scratch = tmp_path / "src", tmp_path / "scratch"
    write_tree(src, BASE)
    write_tree(scratch, {"run.sh": b"left over\n"})
    with pytest.raises(ValueError, match="starts empty"):
        ScratchTree(scratch, directory_provider(src))
    assert ScratchTree(scratch).provider is None  # the whole tree, without a provider: any folder


def test_lazy_provider_refuses_symlinked_source_dirs(tmp_path: Path) -> None:
    src, lazy = tmp_path / "src", tmp_path / "lazy"
    write_tree(src, {"real/a.py": b"a\n", "lib": ("l", b"real")})
    lazy.mkdir()
    patch = parse_patch(git_diff({"lib/a.py": b"a\n"}, {"lib/a.py": b"b\n"}), name="p")
    with pytest.raises(PatchError, match="symbolic link") as exc:
        apply_stack(lazy, [patch], provider=directory_provider(src))
    assert exc.value.patch == "p" and exc.value.file == "lib/a.py"
    assert (src / "real" / "a.py").read_bytes() == b"a\n" and list(lazy.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# hand-written patches whose sections interact (git's fn_table rules)

ALPHA = b"".join(b"alpha %d\n" % i for i in range(5))
BETA = b"".join(b"beta %d\n" % i for i in range(5))
SWAP = b"""diff --git a/a.txt b/b.txt
similarity index 90%
rename from a.txt
rename to b.txt
--- a/a.txt
+++ b/b.txt
@@ -1,3 +1,3 @@
 alpha 0
-alpha 1
+ALPHA 1
 alpha 2
diff --git a/b.txt b/a.txt
similarity index 90%
rename from b.txt
rename to a.txt
"""
COPY_THEN_DELETE = b"""diff --git a/a.txt b/c.txt
similarity index 100%
copy from a.txt
copy to c.txt
diff --git a/a.txt b/a.txt
deleted file mode 100644
--- a/a.txt
+++ /dev/null
@@ -1,5 +0,0 @@
-alpha 0
-alpha 1
-alpha 2
-alpha 3
-alpha 4
"""
MODIFY_A = b"""diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-alpha 0
+x
 alpha 1
"""
CREATE_TWICE = b"""diff --git a/n.txt b/n.txt
new file mode 100644
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+one
diff --git a/n.txt b/n.txt
new file mode 100755
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+two
"""
INTERACTING = {
    "swap-renames": (SWAP, True),
    "modify-name-renamed-away": (
        SWAP + MODIFY_A.replace(b"a.txt", b"b.txt").replace(b"alpha 0", b"alpha 1"),
        False,
    ),
    "copy-then-delete-source": (COPY_THEN_DELETE, True),
    "modify-after-delete": (COPY_THEN_DELETE + MODIFY_A, False),
    "modify-twice": (MODIFY_A + MODIFY_A.replace(b"-alpha 0\n+x", b"-x\n+y"), True),
    "create-twice": (CREATE_TWICE, True),
}


@pytest.mark.parametrize("name", sorted(INTERACTING))
def test_interacting_sections_match_git(name: str) -> None:
    patch, ok = INTERACTING[name]
    (r,) = compare_with_git({"a.txt": ALPHA, "b.txt": BETA}, [patch])
    assert r.ok == ok


def test_creating_below_a_file_fails_before_writing(tmp_path: Path) -> None:
    patch = git_diff({}, {"a.txt": b"a\n", "run.sh/x": b"x\n"})
    ref, mine = tmp_path / "ref", tmp_path / "mine"
    write_tree(ref, BASE)
    write_tree(mine, BASE)
    (tmp_path / "p.patch").write_bytes(patch)
    ok, _ = git_apply(ref, tmp_path / "p.patch", 1)
    assert not ok and (ref / "a.txt").exists()  # git fails while writing, after writing a.txt
    before = snapshot(mine)
    r = apply_patch_to_tree(mine, parse_patch(patch, name="p"))
    assert not r.ok and "is a file" in r.failures[0].reason
    assert snapshot(mine) == before  # we fail before writing anything


def test_lazy_provider_type_changes_between_file_and_dir(tmp_path: Path) -> None:
    start = {"d/x": b"x\n", "f": b"f\n", "keep/k": b"k\n"}
    end = {"d": b"now a file\n", "f/y": b"y\n", "keep/k": b"k\n"}
    clash = parse_patch(git_diff({}, {"keep": b"clash\n"}), name="clash.patch")  # keep/ is not empty
    patches = [*_patches((start, end)), clash]
    full, lazy, src = tmp_path / "full", tmp_path / "lazy", tmp_path / "src"
    write_tree(full, start)
    write_tree(src, start)
    lazy.mkdir()
    r_full = apply_stack(full, patches, keep_going=True)
    r_lazy = apply_stack(lazy, patches, keep_going=True, provider=directory_provider(src))
    assert [r.ok for r in r_full] == [r.ok for r in r_lazy] == [True, False]
    assert (lazy / "d").read_bytes() == b"now a file\n" and (lazy / "f" / "y").read_bytes() == b"y\n"


@pytest.mark.parametrize("kind", ["create", "modify"])
def test_name_too_long_for_the_file_system_fails_like_git(tmp_path: Path, kind: str) -> None:
    # The scratch tree's OSError (ENAMETOOLONG) escaped as a bare message; git says the patch
    # does not apply, so it is a failed patch naming the file.
    name = "d/" + "b" * 300 + ".py"
    head = "new file mode 100644\n--- /dev/null\n" if kind == "create" else f"--- a/{name}\n"
    hunk = "@@ -0,0 +1 @@\n+x = 1\n" if kind == "create" else "@@ -1 +1 @@\n-x\n+y\n"
    text = f"diff --git a/{name} b/{name}\n{head}+++ b/{name}\n{hunk}"
    mine, ref = tmp_path / "mine", tmp_path / "ref"
    for root in (mine, ref):
        write_tree(root, {"d/keep.py": b"x\n"})
    (tmp_path / "long.patch").write_text(text)
    applied, _err = git_apply(ref, tmp_path / "long.patch", 1)
    result = ScratchTree(mine).apply(parse_patch(text.encode(), name="long.patch"))
    assert not applied and not result.ok
    assert [f.file for f in result.failures] == [name]
    assert "File name too long" in result.failures[0].reason
    assert sorted(p.name for p in mine.rglob("*")) == ["d", "keep.py"]
