"""An upstream change as ``git diff-tree --raw`` records: one commit against its first parent
(``-M``: renames with both paths), many commits through one ``git diff-tree --stdin``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vimesync import git

NULL = "0" * 40


@dataclass(frozen=True)
class Raw:
    """One ``git diff-tree --raw`` record."""

    old_mode: int
    new_mode: int
    old_oid: str
    new_oid: str
    status: str
    old_path: str | None
    new_path: str | None


def parse_raw(out: bytes) -> list[Raw]:
    """``git diff-tree -r -z -M --raw`` output -> records (a rename has both paths)."""
    toks = out.split(b"\0")
    recs: list[Raw] = []
    i = 0
    while i < len(toks) and toks[i]:
        meta = toks[i].decode().lstrip(":").split()
        status = meta[4][0]
        path1 = toks[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        path2 = None
        if status in "RC":
            path2 = toks[i].decode("utf-8", "surrogateescape")
            i += 1
        old_mode, new_mode = int(meta[0], 8), int(meta[1], 8)
        if status == "A":
            recs.append(Raw(0, new_mode, NULL, meta[3], "A", None, path1))
        elif status == "D":
            recs.append(Raw(old_mode, 0, meta[2], NULL, "D", path1, None))
        elif status == "R":
            recs.append(Raw(old_mode, new_mode, meta[2], meta[3], "R", path1, path2))
        elif status == "C":
            recs.append(Raw(0, new_mode, NULL, meta[3], "A", None, path2))
        else:  # M, T
            recs.append(Raw(old_mode, new_mode, meta[2], meta[3], "M", path1, path1))
    return recs


def upstream_changes(upstream: Path, pairs: list[tuple[str, str | None]]) -> dict[str, list[Raw]]:
    """The change of each ``(commit, parent)`` (parent None: a root commit against nothing),
    through one ``git diff-tree --stdin`` (and one more for each root commit)."""
    return tree_changes(upstream, pairs)


def tree_changes(
    repo: Path, pairs: list[tuple[str, str | None]], *, renames: bool = True
) -> dict[str, list[Raw]]:
    """:func:`upstream_changes` in any repository; ``renames=False``: a rename is a deletion and
    an addition (no ``-M``), as a commit's own files are compared."""
    out: dict[str, list[Raw]] = {}
    flags = ["-r", "-z", *(["-M"] if renames else []), "--raw"]
    with_parent = [(c, p) for c, p in pairs if p is not None]
    if with_parent:
        stdin = "".join(f"{c} {p}\n" for c, p in with_parent).encode()
        out.update(_split_stdin_output(git.run(repo, ["diff-tree", "--stdin", *flags], input=stdin)))
    for c, p in pairs:
        if p is None:
            out[c] = parse_raw(git.run(repo, ["diff-tree", *flags, "--no-commit-id", "--root", c]))
        out.setdefault(c, [])
    return out


def _split_stdin_output(out: bytes) -> dict[str, list[Raw]]:
    """``diff-tree --stdin -z --raw`` output: a commit id, then its records, per commit."""
    toks = out.split(b"\0")
    found: dict[str, list[Raw]] = {}
    i = 0
    current: list[bytes] = []
    sha = None
    while i < len(toks):
        tok = toks[i]
        if not tok:
            i += 1
            continue
        if tok.startswith(b":"):
            status = tok.split()[4][:1]
            n = 3 if status in (b"R", b"C") else 2
            current.extend(toks[i : i + n])
            i += n
            continue
        if sha is not None:
            found[sha] = parse_raw(b"\0".join(current) + b"\0")
        sha, current = tok.decode().split()[0], []
        i += 1
    if sha is not None:
        found[sha] = parse_raw(b"\0".join(current) + b"\0") if current else []
    return found


def upstream_change(upstream: Path, commit: str, parent: str | None) -> list[Raw]:
    """The change of ``commit`` against ``parent`` (None: the root commit against nothing)."""
    args = ["diff-tree", "-r", "-z", "-M", "--raw", "--no-commit-id"]
    args += [parent, commit] if parent else ["--root", commit]
    return parse_raw(git.run(upstream, args))
