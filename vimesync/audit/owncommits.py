"""The sync's own changes: the commits on the sync branch that carry did not make.

Between the baseline and the head, the first-parent commits are of three kinds: those carry made
(an ``Upstream-PR`` or ``Upstream-Commit`` trailer), the pin bump (it changes the upstream pin
file and nothing else), and the maintainer's own (audit fixes, overlays, restored comments).
The report lists the last kind with their line counts and the net total ("net -512 lines"),
as the seed PR's "Audit fixes net-remove approximately 500 lines" says by hand.

Bookkeeping (:mod:`vimesync.audit.bookkeeping`: the review ledgers and evidence records, exactly)
is not a change: its lines are not counted, and a commit of nothing else is not listed. Any other
file under ``sop/`` (a script, a symlink, a file made executable) counts like any code.

:func:`parse_log` is pure (git's output in, records out); :func:`own_commits` runs the one
``git log`` it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vimesync import git
from vimesync.audit.bookkeeping import DEFAULT, Bookkeeping, ChangedPath

CARRY_TRAILERS = ("Upstream-PR", "Upstream-Commit")
MAX_COMMITS = 10_000  # commits read from one sync branch
# Each commit's header line starts with two NULs and its fields are NUL-separated: no subject,
# author or trailer holds a NUL, so none can forge a record or a field.
_MARK = "\0\0"
_FIELDS = 5  # sha, author, subject, trailers, then the numstat lines


@dataclass(frozen=True)
class OwnCommit:
    sha: str
    author: str
    subject: str
    added: int
    removed: int
    binary: int = 0  # files changed whose line counts git cannot give


@dataclass(frozen=True)
class OwnChanges:
    commits: tuple[OwnCommit, ...]  # oldest first
    carried: int = 0  # commits carry made, not listed
    pin_bumps: int = 0  # pin bump commits, not listed
    bookkeeping: int = 0  # commits of review ledgers and records only (sop/), not listed

    @property
    def added(self) -> int:
        return sum(c.added for c in self.commits)

    @property
    def removed(self) -> int:
        return sum(c.removed for c in self.commits)

    @property
    def net(self) -> int:
        return self.added - self.removed


def _raw_change(line: str) -> ChangedPath | None:
    """``:100644 100755 <oid> <oid> M<TAB>path`` (a ``--raw`` line; the path as git prints it,
    C-quoted when unusual: a quoted path is never a bookkeeping file's plain name)."""
    meta, _, path = line.partition("\t")
    modes = meta[1:].split(" ")[:2]
    if len(modes) != 2 or not all(m.isdigit() for m in modes):
        return None
    return ChangedPath(path, int(modes[0], 8), int(modes[1], 8))


_PIN_SUBJECT = re.compile(r"Sync upstream through [0-9a-f]{7,40}")  # carry.pin's message


def _is_pin_bump(subject: str, paths: list[str], pin_path: str | None) -> bool:
    """The pin file and nothing else changed; without the pin's path, carry's subject on a
    one-file commit."""
    if not paths:
        return False
    if pin_path is not None:
        return all(p == pin_path for p in paths)
    return len(paths) == 1 and _PIN_SUBJECT.fullmatch(subject) is not None


def parse_log(out: str, *, pin_path: str | None, where: Bookkeeping = DEFAULT) -> OwnChanges:
    """``git log --format=<_MARK>...`` with ``--raw --numstat`` (see :func:`own_commits`), newest
    first, into the sync's own commits, oldest first."""
    own: list[OwnCommit] = []
    carried = pins = kept = 0
    for record in out.split(_MARK)[1:]:
        head, _, stats = record.partition("\n")
        fields = head.split("\0")
        if len(fields) != _FIELDS - 1:
            continue
        sha, author, subject, trailers = fields
        added = removed = binary = 0
        changes = [c for line in stats.splitlines() if line.startswith(":") and (c := _raw_change(line))]
        kept_paths = {c.path for c in changes if where.is_change(c.path, c.old_mode, c.new_mode)}
        paths = [c.path for c in changes]
        for line in stats.splitlines():
            parts = line.split("\t", 2)
            if len(parts) != 3 or line.startswith(":"):
                continue
            if parts[2] in kept_paths:
                continue
            if parts[0] == "-" or parts[1] == "-":
                binary += 1
                continue
            added += int(parts[0]) if parts[0].isdigit() else 0
            removed += int(parts[1]) if parts[1].isdigit() else 0
        if trailers.strip():
            carried += 1
        elif _is_pin_bump(subject, paths, pin_path):
            pins += 1
        elif changes and where.only(changes):
            kept += 1
        else:
            own.append(OwnCommit(sha, author, subject, added, removed, binary))
    return OwnChanges(commits=tuple(reversed(own)), carried=carried, pin_bumps=pins, bookkeeping=kept)


def own_commits(
    downstream: Path, baseline: str, head: str, *, pin_path: str | None, where: Bookkeeping = DEFAULT
) -> OwnChanges:
    """The first-parent commits of ``baseline..head`` carry did not make (``pin_path``: the
    upstream pin file relative to the downstream root, whose lone change is the pin bump;
    ``where``: vimesync's own files, not counted)."""
    keys = ",".join(f"key={k}" for k in CARRY_TRAILERS)
    out = git.run(
        downstream,
        [
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--no-renames",
            "--raw",
            "--no-abbrev",
            "--numstat",
            f"--max-count={MAX_COMMITS}",
            f"--format=%x00%x00%H%x00%an%x00%s%x00%(trailers:{keys},valueonly,separator=%x20)",
            f"{baseline}..{head}",
        ],
    )
    return parse_log(out.decode("utf-8", "replace"), pin_path=pin_path, where=where)
