"""What every record of what ran at the head checks before it is written (``sop record tests``,
``run``, ``ci``, ``precommit`` and ``sop regress``):

- the tree is the head's: a record binds to HEAD (its evidence head), so while tracked files
  differ from HEAD it is refused, naming them (:func:`refuse_modified`); only vimesync's own
  bookkeeping of the sync (its records file, its review ledger) may differ. Image records and
  promotions describe images built from a commit they name, not the tree: they are not refused.
- a record is never replaced unawares: a record of the same kind and name at the same evidence
  head is refused unless ``--replace`` is given, and then named with its old values
  (:func:`replaced_record`, :func:`replaced_note`)."""

from __future__ import annotations

from pathlib import Path

from vimesync.audit.bookkeeping import Bookkeeping
from vimesync.errors import BadInput
from vimesync.sop.results import AnyRecord, key_of, load_results
from vimesync.text import agree, plural

MAX_SHOWN = 3  # modified paths named in the refusal
MAX_PATH_SHOWN = 100  # characters of each


def own_files(bookkeeping: Bookkeeping, sync: str) -> frozenset[str]:
    """The sync's records file and review ledger, as paths from the repository root."""
    return frozenset({f"{bookkeeping.records}/{sync}.toml", f"{bookkeeping.reviews}/{sync}.toml"})


def refuse_modified(repo: Path | None, bookkeeping: Bookkeeping, sync: str) -> None:
    """BadInput naming the tracked files (at most :data:`MAX_SHOWN`, each shown escaped and
    cut) whose index or work-tree content differs from HEAD, but the sync's own bookkeeping.
    HEAD is the checkout's, whatever ``--head`` names: the tree is what ran."""
    from vimesync import git

    if repo is None:
        return
    own = own_files(bookkeeping, sync)
    modified = [p for p in git.modified_paths(repo) if p not in own]
    if not modified:
        return
    n, head = len(modified), git.resolve(repo, "HEAD")
    shown = ", ".join(_shown(p) for p in modified[:MAX_SHOWN])
    more = f" and {n - MAX_SHOWN:,} more" if n > MAX_SHOWN else ""
    raise BadInput(
        f"{plural(n, 'tracked file')} {agree(n, 'differs', 'differ')} from HEAD {head[:12]} ({shown}{more}):"
        " a record binds to HEAD, not to a modified tree; commit or stash them, then record again"
    )


def _shown(path: str) -> str:
    """A path a pull request named, quoted with every control, bidi or undecodable character
    escaped (``repr``), cut to :data:`MAX_PATH_SHOWN` characters."""
    cut = path[:MAX_PATH_SHOWN]
    return repr(cut) + ("…" if len(path) > MAX_PATH_SHOWN else "")


_WORDS = {"tests": "suite", "runs": "run", "regress": "matrix"}  # a named record's kind, in a sentence


def replaced_record(
    sop_root: Path, sync: str, kind: str, name: str, sha: str, *, replace: bool
) -> AnyRecord | None:
    """The record of ``kind`` (its table: tests, runs, ci, precommit, regress) named ``name`` (as
    the record names itself: a CI snapshot ``#1454``) at the evidence head ``sha``, which writing
    would replace (None: there is none). BadInput when there is one and ``replace`` is false,
    naming it and its values."""
    old = next(
        (r for r in load_results(sop_root, sync).records if key_of(r)[:3] == (kind, name, sha)),
        None,
    )
    if old is not None and not replace:
        raise BadInput(
            f"{_label(kind, old.name)} is already recorded at {sha[:8]} ({_values(old)}):"
            " pass --replace to replace it"
        )
    return old


def replaced_note(kind: str, old: AnyRecord) -> str:
    """What ``--replace`` replaced, with its old values (a note: stderr, and the JSON's notes)."""
    return f"replaced the {_label(kind, old.name)} recorded at {old.sha[:8]} ({_values(old)})"


def _label(kind: str, name: str) -> str:
    """A record in a sentence: ``run 'unit'``, ``CI snapshot of build #1454``. A name is plain
    (the records file's names are checked when read); ``repr`` quotes it all the same."""
    if kind == "ci":
        return f"CI snapshot of build {name}" if name.startswith("#") else f"CI snapshot of the {name}"
    if kind == "precommit":
        return f"pre-commit record of the {name}"
    return f"{_WORDS[kind]} {name!r}"


def _values(old: AnyRecord) -> str:
    from vimesync.report.evidence import describe_record

    return describe_record(old) + (f", recorded {old.recorded_at}" if old.recorded_at else "")
