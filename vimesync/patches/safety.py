"""Path validation for untrusted patches.

Patches come from pull requests, so every path a patch names (after -pN stripping) must be a
plain relative path that stays inside the tree and cannot reach git's own metadata on any
platform the tree may later be checked out on. We refuse rather than normalize: a path that
needs fixing up is a path someone may have crafted.
"""

from __future__ import annotations

import re

from vimesync.errors import PatchError
from vimesync.safefs import excerpt

MAX_PATH_BYTES = 4095  # PATH_MAX on Linux (4096) counts the terminating NUL
# Deeper paths buy nothing real and cost recursion: cleaning up a 2,000-level tree made
# shutil.rmtree hit RecursionError and leave the scratch folder behind.
MAX_PATH_COMPONENTS = 256

# Windows drive letters ("C:", "c:foo"): absolute or drive-relative there, so never portable.
_DRIVE = re.compile(r"^[A-Za-z]:")
# HFS+ ignores these code points when comparing names, so ".g\u200cit" is ".git" on macOS.
_HFS_IGNORABLE = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


def is_dotgit_alias(component: str) -> bool:
    """True when ``component`` names the ``.git`` directory on some filesystem git supports."""
    name = component.translate(_HFS_IGNORABLE).lower()
    # NTFS drops trailing dots and spaces and reads "x::$INDEX_ALLOCATION" as the directory x.
    name = name.split(":", 1)[0].rstrip(". ")
    # NTFS 8.3 short name of ".git" is "GIT~1" (git also guards "git~1" itself).
    return name in (".git", "git~1")


def _problem(path: str) -> str | None:
    """Why ``path`` is unsafe, or None when it is fine."""
    if not path:
        return "empty path"
    if len(path.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        return f"path longer than {MAX_PATH_BYTES} bytes"
    if path.count("/") >= MAX_PATH_COMPONENTS:
        return f"path deeper than {MAX_PATH_COMPONENTS} components"
    if "\0" in path:
        return "NUL byte in path"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        # Legal in git on Linux, but not portable (Windows forbids them) and a classic way to
        # make terminal output and reports lie.
        return "control character in path"
    if "\\" in path:
        # git on Linux treats a backslash as part of a file name, but Windows (and git for
        # Windows) treats it as a separator, so "a\\..\\x" could escape there.
        return "backslash in path (refused for portability: it is a separator on Windows)"
    if path.startswith("/"):
        return "absolute path"
    if _DRIVE.match(path):
        return "Windows drive letter in path"
    for component in path.split("/"):
        if component == "":
            return "empty path component ('//' or a trailing '/')"
        if component in (".", ".."):
            return f"'{component}' path component"
        if is_dotgit_alias(component):
            return f"'.git' path component ({component!r})"
    return None


def is_safe(path: bytes | str) -> bool:
    """True when ``path`` is a plain relative path that stays inside the tree."""
    if isinstance(path, bytes):
        path = path.decode("utf-8", "surrogateescape")
    return _problem(path) is None


def check_path(path: bytes | str, *, patch: str, line: int | None = None) -> str:
    """Return ``path`` as ``str`` (bytes decoded as UTF-8, undecodable bytes kept as surrogate
    escapes so the file name round-trips byte-exactly), or raise PatchError naming the patch
    and line when the path is unsafe: empty, absolute, a drive letter, ``..`` or ``.``, an empty
    component, a ``.git`` component in any case or filesystem alias, NUL, control characters or
    a backslash. The message quotes a short, escaped excerpt of the path."""
    text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
    problem = _problem(text)
    if problem:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise PatchError(patch, f"unsafe path {excerpt(shown)}: {problem}", line=line)
    return text
