"""Bookkeeping: the files vimesync writes about a sync, and nothing else.

vimesync keeps two kinds of file in the downstream repository: the review ledgers
(``sop/reviews/<sync>.toml``, :mod:`vimesync.audit.ledger`) and the evidence records
(``sop/records/<sync>.toml``: tests, runs, CI, pre-commit, images, promotions; beside the
vimesync.toml, which may live in a sub-folder). Committing one of them changes no code, so it is
not audited (a review must not call for a review), not counted among the sync's own changes,
and it does not move the evidence head (recording evidence must not make it stale).

Only those files, exactly: a regular, non-executable file directly in one of the two folders,
named as vimesync names a sync. Anything else there -- a ``conftest.py``, a script, a ``.toml``
of another name, a sub-folder, a symlink, a file made executable -- is a change like any code:
audited, counted, and it moves the evidence head. Every user of the concept asks this module.

Pure: paths and modes in, answers out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from posixpath import join

REVIEWS = "sop/reviews"  # the review ledgers, at the repository's root
RECORDS = "sop/records"  # the evidence records, beside vimesync.toml
REGULAR = 0o100644  # the only mode a bookkeeping file has (git's 100644)
NO_FILE = 0  # git's mode for "no file" (added, deleted)
# The stem of a ledger or records file: a sync's name as records.records_file and ledger.file_safe
# write it (``4c193f1f..8c17b676``): letters, digits, '.', '_', '-', no leading dot, bounded.
STEM = re.compile(r"[0-9A-Za-z_-][0-9A-Za-z._-]{0,199}")


@dataclass(frozen=True)
class ChangedPath:
    """One path a commit changed, with its mode before and after (``NO_FILE``: none)."""

    path: str
    old_mode: int
    new_mode: int


@dataclass(frozen=True)
class Bookkeeping:
    """Where vimesync's own files are in one repository (folders relative to its root)."""

    records: str = RECORDS
    reviews: str = REVIEWS

    @classmethod
    def beside(cls, config_dir: str) -> Bookkeeping:
        """The records beside a vimesync.toml in ``config_dir`` (``""`` or ``.``: the root)."""
        folder = config_dir.strip("/").removeprefix("./")
        return cls(records=join(folder, RECORDS) if folder not in ("", ".") else RECORDS)

    def is_file(self, path: str) -> bool:
        """``path`` names a ledger or a records file (its mode aside: see :meth:`is_change`)."""
        folder, _, name = path.rpartition("/")
        if folder not in (self.records, self.reviews) or not name.endswith(".toml"):
            return False
        return STEM.fullmatch(name.removesuffix(".toml")) is not None

    def is_change(self, path: str, old_mode: int, new_mode: int) -> bool:
        """A change of a bookkeeping file that stays one: a regular file added, edited or removed
        (a symlink there, a mode made executable, a submodule, are changes like any other)."""
        return self.is_file(path) and old_mode in (NO_FILE, REGULAR) and new_mode in (NO_FILE, REGULAR)

    def only(self, changes: Iterable[ChangedPath]) -> bool:
        """Every change is bookkeeping (no change at all is too: an empty commit changes no code)."""
        return all(self.is_change(c.path, c.old_mode, c.new_mode) for c in changes)


DEFAULT = Bookkeeping()
