from __future__ import annotations

import pytest

from vimesync.errors import PatchError
from vimesync.patches.safety import check_path, is_safe

SAFE = [
    "a",
    "src/pkg/module.py",
    "caf\u00e9/na\u00efve.txt",
    "sp ace/x y.txt",
    ".github/workflows/ci.yml",  # starts with ".git" but is another name
    ".gitignore",
    ".gitmodules",
    "x/.gitattributes",
    "git/x",
    "a..b/c...d",
    "x.git",
    "file:with:colons",
    "-leading-dash",
]

UNSAFE = [
    ("", "empty path"),
    ("/etc/passwd", "absolute"),
    ("../x", "'..'"),
    ("a/../../x", "'..'"),
    ("a/..", "'..'"),
    ("./a", "'.'"),
    ("a/./b", "'.'"),
    ("a//b", "empty path component"),
    ("a/", "empty path component"),
    (".git/config", "'.git'"),
    ("sub/.git/hooks/pre-commit", "'.git'"),
    (".GIT/config", "'.git'"),
    (".Git/config", "'.git'"),
    (".git", "'.git'"),
    (".git /config", "'.git'"),  # NTFS drops trailing spaces
    (".git./config", "'.git'"),  # ... and dots
    (".git::$INDEX_ALLOCATION/config", "'.git'"),  # NTFS stream syntax
    ("GIT~1/config", "'.git'"),  # NTFS 8.3 short name
    (".g\u200cit/config", "'.git'"),  # HFS+ ignores zero-width non-joiner
    (".gi\ufefft/config", "'.git'"),
    ("C:/Windows/x", "drive letter"),
    ("c:x", "drive letter"),
    ("a\\..\\b", "backslash"),
    ("a\0b", "NUL"),
    ("a\nb", "control character"),
    ("a\tb", "control character"),
    ("x" * 5000, "longer than"),
]


@pytest.mark.parametrize("path", SAFE)
def test_safe_paths_pass_unchanged(path: str) -> None:
    assert is_safe(path)
    assert check_path(path, patch="p.patch", line=3) == path
    assert check_path(path.encode(), patch="p.patch", line=3) == path


@pytest.mark.parametrize(("path", "why"), UNSAFE)
def test_unsafe_paths_are_refused(path: str, why: str) -> None:
    assert not is_safe(path)
    with pytest.raises(PatchError, match=why) as info:
        check_path(path, patch="evil.patch", line=7)
    assert info.value.patch == "evil.patch" and info.value.line == 7 and info.value.exit_code == 2


def test_bytes_that_are_not_utf8_round_trip() -> None:
    raw = b"caf\xe9.txt"  # latin-1 name
    name = check_path(raw, patch="p", line=1)
    assert name.encode("utf-8", "surrogateescape") == raw
    assert not is_safe(b"\xff/../x")


def test_depth_is_capped_like_git_and_path_max() -> None:
    assert is_safe("/".join(["a"] * 256))
    assert not is_safe("/".join(["a"] * 257))
    with pytest.raises(PatchError, match="deeper than 256 components"):
        check_path("a/" * 2000 + "x.py", patch="deep.patch")


def test_length_is_capped_at_path_max_less_its_nul() -> None:
    # PATH_MAX (4096) counts the terminating NUL: git cannot create a 4,096-byte path either.
    name = "/".join(["b" * 200] * 21)
    assert is_safe(name[:4095])
    assert not is_safe(name[:4096])
