"""Which commit evidence binds to, and who committed each record.

Recording evidence is itself a commit (``sop/records/<sync>.toml`` changes), and so is committing
the review ledger: if evidence bound to the head, committing either would make it stale. So it
binds to the *evidence head*: the nearest first-parent ancestor-or-self of the head that changes
something besides bookkeeping (:mod:`vimesync.audit.bookkeeping`: vimesync's own ledger and
records files, exactly; an empty commit changes nothing). A commit that touches code, patches,
pins or any other file -- a ``conftest.py`` under ``sop/records/`` too -- moves the evidence head,
and every record made before it is then not evidence.

The walk reads ``git log --raw -z``: each change is a ``:``-metadata token then exactly one path
token, so no file name (whatever bytes it holds) can be read as a commit or a mode.

A record is a claim by whoever commits it: :func:`committers` reads the records file's history
and names, for each record as it is now (every value of it), the committer of the commit that
made it so: the latest commit holding it in exactly this form while none of its parents did.
One not committed yet is the working tree's claim only."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from vimesync import git
from vimesync.audit.bookkeeping import DEFAULT, Bookkeeping, ChangedPath
from vimesync.errors import GitError, VimesyncError

Key = tuple[str, str, str, str]  # resultmodel.key_of: (kind, name, evidence head, the record's value)

MAX_WALK = 10_000  # first-parent commits looked at for the evidence head
MAX_HISTORY = 200  # commits of the records file read for its committers
MAX_WHO = 200  # characters of a committer's "Name <email>" kept
MAX_PARSED = 2 << 20  # bytes of the records file's versions parsed for its committers
# Who made a record when its maker lies beyond what is read (MAX_HISTORY, MAX_PARSED): not known.
UNREAD = "an earlier commit, not read (the file's history is longer than vimesync reads)"
_COMMIT_HEAD = 64 << 10  # bytes of a commit object read for its committer line
_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


def parse_raw_log(chunks: Iterable[bytes]) -> Iterator[tuple[str, list[ChangedPath]]]:
    """``git log --format=%H --raw -z --no-renames`` as ``(commit, its changes)``, newest first.

    Tokens are NUL-terminated: a commit's sha, then per change a ``:old new oid oid X`` token and
    one path token. A path token is taken whole whatever it holds; a token where a sha or a
    change is expected that is neither is GitError (never guessed)."""
    sha: str | None = None
    changes: list[ChangedPath] = []
    meta: bytes | None = None  # the change whose path token comes next
    rest = b""
    for chunk in chunks:
        tokens = (rest + chunk).split(b"\0")
        rest = tokens.pop()
        for token in tokens:
            if meta is not None:
                changes.append(_change(meta, token))
                meta = None
                continue
            token = token.lstrip(b"\n")
            if token.startswith(b":") and sha is not None:
                meta = token
            elif _SHA.fullmatch(token):
                if sha is not None:
                    yield sha, changes
                sha, changes = token.decode("ascii"), []
            else:
                raise GitError("git log --raw: unexpected output (not a commit, not a change)")
    if rest.strip(b"\n") or meta is not None:
        raise GitError("git log --raw: output ended inside a change")
    if sha is not None:
        yield sha, changes


def _change(meta: bytes, path: bytes) -> ChangedPath:
    fields = meta[1:].split(b" ")
    try:
        old, new = int(fields[0], 8), int(fields[1], 8)
    except (IndexError, ValueError):
        raise GitError("git log --raw: a change without its modes") from None
    return ChangedPath(path.decode("utf-8", "surrogateescape"), old, new)


def evidence_head(repo: Path, head: str, where: Bookkeeping = DEFAULT) -> str:
    """The commit evidence recorded at ``head`` binds to (see the module's text). When more than
    MAX_WALK commits in a row are bookkeeping, nothing older is trusted: ``head`` itself."""
    args = [
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        f"--max-count={MAX_WALK}",
        "--format=%H",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        head,
        "--",
    ]
    seen = 0
    last = None
    for sha, changes in parse_raw_log(git.stream(repo, args)):
        if not where.only(changes):
            return sha  # stops reading: git ends on the closed pipe
        seen, last = seen + 1, sha
    if last is None:
        return head
    # The walk reached the first commit (every one bookkeeping): that root; cut short: the head.
    return last if seen < MAX_WALK else git.resolve(repo, head)


def committers(
    repo: Path, head: str, relpath: str, keys: Callable[[str], set[Key]], *, max_bytes: int
) -> dict[Key, str]:
    """``{key: "Name <email>"}``: for each record the file holds at ``head`` (``keys`` of a blob's
    text, each a record's whole value), the committer of the latest commit that holds it while
    none of its parents does (a record edited, even to its figures, is claimed anew by who edited
    it). A version that is malformed, too big or not a regular file holds no record. The newest
    changes are read first, until every record is named; one whose maker lies beyond
    MAX_HISTORY changes or MAX_PARSED bytes of versions is :data:`UNREAD`'s."""
    found: dict[Key, str] = {}
    with git.CatFile(repo) as cat:
        versions = _Versions(cat, relpath, keys, max_bytes)
        wanted = set(versions.at(head))
        for commit, parents in history(repo, head, relpath):
            if not wanted - found.keys() or versions.parsed > MAX_PARSED:
                break
            before: set[Key] = set()
            for parent in parents:
                before |= versions.at(parent)
            made = (versions.at(commit) - before) & wanted
            if made - found.keys():
                who = committer_of(cat, commit)
                for key in made:
                    found.setdefault(key, who)  # newest first: the latest commit that made it so
    return found | dict.fromkeys(wanted - found.keys(), UNREAD)


def history(repo: Path, head: str, relpath: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(commit, its parents)`` of the commits that changed ``relpath``, newest first (children
    before their parents), at most MAX_HISTORY."""
    out = git.run(
        repo,
        [
            "log",
            "--topo-order",
            f"--max-count={MAX_HISTORY}",
            "--format=%H %P",
            "-z",
            "--no-renames",
            head,
            "--",
            f":(literal){relpath}",
        ],
    )
    found = []
    for line in out.split(b"\0"):
        shas = line.strip(b"\n").split(b" ")
        if not shas[0]:
            continue
        if not all(_SHA.fullmatch(s) for s in shas):
            raise GitError("git log: unexpected output (not a commit and its parents)")
        found.append((shas[0].decode("ascii"), tuple(s.decode("ascii") for s in shas[1:])))
    return found


class _Versions:
    """The records file ``relpath`` at commits, read through one ``git cat-file``: its folder's
    tree object (parsed once per tree), then its blob (parsed once per blob)."""

    MAX_TREE = 1 << 20  # ~20,000 entries: a records folder holds a few files

    def __init__(
        self, cat: git.CatFile, relpath: str, keys: Callable[[str], set[Key]], max_bytes: int
    ) -> None:
        self.cat, self.keys, self.max_bytes = cat, keys, max_bytes
        self.folder, _, self.name = relpath.rpartition("/")
        self.trees: dict[str, dict[str, tuple[int, str]]] = {}
        self.held: dict[str, frozenset[Key]] = {}  # blob oid -> the records it holds
        self.parsed = 0  # bytes of versions parsed so far

    def at(self, commit: str) -> frozenset[Key]:
        """The records the file holds at ``commit`` (none: absent, not a regular file, too big,
        not UTF-8 or malformed)."""
        oid = self._blob(commit)
        if oid is None:
            return frozenset()
        if oid not in self.held:
            try:
                data = self.cat.read(oid, max_size=self.max_bytes)
                self.parsed += len(data)
                self.held[oid] = frozenset(self.keys(data.decode("utf-8")))
            except (UnicodeDecodeError, VimesyncError):
                self.held[oid] = frozenset()
        return self.held[oid]

    def _blob(self, commit: str) -> str | None:
        found = self.cat.lookup(f"{commit}:{self.folder}" if self.folder else f"{commit}^{{tree}}")
        if found is None or found[1] != "tree":
            return None
        oid = found[0]
        if oid not in self.trees:
            try:
                self.trees[oid] = git.parse_tree(self.cat.read(oid, max_size=self.MAX_TREE), len(oid) // 2)
            except GitError:
                self.trees[oid] = {}  # a folder too big to read holds no records file we trust
        mode, blob = self.trees[oid].get(self.name, (0, ""))
        return blob if mode == git.MODE_FILE else None


def committer_of(cat: git.CatFile, commit: str) -> str:
    """``Name <email>`` of the commit's committer line, as the commit object holds it (one
    header line: it holds no newline), bounded."""
    data = cat.read(commit, head=_COMMIT_HEAD)
    for line in data.split(b"\n"):
        if not line:
            break  # the end of the headers
        if line.startswith(b"committer "):
            ident = line[len(b"committer ") :]
            cut = ident.rfind(b">")
            ident = ident[: cut + 1] if cut >= 0 else ident
            return ident.decode("utf-8", "replace")[:MAX_WHO]
    return "an unknown committer"
