"""The review ledger ``sop/reviews/<sync>.toml``: who reviewed which path at which content hash.

One ``[[review]]`` per path (a re-review replaces the earlier entry), sorted by path so the
file diffs cleanly. Rewritten through ``vimesync.tomledit`` (tomlkit): comments a reviewer wrote,
at the top or inside an entry, survive a rewrite, and every string is escaped by the library (a
path with DEL or other control characters reads back the same). Written atomically::

    # vimesync review ledger: edit with `vimesync audit review PATH... --by NAME`
    sync = "4c193f1f..8c17b676"

    [[review]]
    path = "vime/rollout.py"
    oid = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
    by = "alice"
    at = "2026-11-29T21:00:00Z"
    residue = "9f2c..."   # an overlay's: the review holds in later syncs while this does

An overlay's review is looked up in the earlier syncs' ledgers too (:func:`earlier_ledgers`):
it carries over as long as the residue it recorded is the residue at the new head.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import tomlkit

from vimesync import safefs, tomledit
from vimesync.audit.bookkeeping import REVIEWS
from vimesync.audit.model import Ledger, Review
from vimesync.config import read_toml
from vimesync.errors import BadInput
from vimesync.safefs import Text, open_keys
from vimesync.text import visible

LEDGER_DIR = REVIEWS  # one spelling: audit/bookkeeping.py says what in it is bookkeeping


def file_safe(sync: str) -> str:
    """``4c193f1f..8c17b676`` stays as is; anything but ``[A-Za-z0-9._-]`` becomes ``-``; no leading dot."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", sync).lstrip(".")
    return safe or "sync"


def ledger_relpath(sync: str) -> str:
    """Where the ledger of ``sync`` lives, relative to the downstream root."""
    return f"{LEDGER_DIR}/{file_safe(sync)}.toml"


def _root(path: Path) -> Path | None:
    """The downstream root of a ledger at ``<root>/sop/reviews/<name>.toml``: from there down no
    folder may be a symlink (a committed ``sop/reviews -> /elsewhere`` is refused)."""
    depth = len(Path(LEDGER_DIR).parts)
    if path.parent.parts[-depth:] == Path(LEDGER_DIR).parts:
        return path.parents[depth]
    return None


NonEmpty = Annotated[str, Text(min=1)]


@open_keys  # a reviewer's own keys are kept by the writer (see _document), so read past them
@dataclass(frozen=True)
class _ReviewDoc:
    """One ``[[review]]`` entry."""

    path: NonEmpty
    oid: NonEmpty
    by: NonEmpty
    at: str = ""
    residue: str = ""


@open_keys
@dataclass(frozen=True)
class _LedgerDoc:
    sync: str | None = None
    review: tuple[_ReviewDoc, ...] = ()


def read_ledger(path: Path, sync: str) -> Ledger:
    """Load a ledger; an absent file is an empty ledger. ConfigError on a malformed one (naming
    the file and the key), and on a symlink at the file or at a folder on its way (``safefs``)."""
    if safefs.input_kind(path, root=_root(path)) == "missing":
        return Ledger(sync=sync)
    doc = safefs.decode(_LedgerDoc, read_toml(path, root=_root(path)), where=str(path))
    reviews = {
        r.path: Review(path=r.path, oid=r.oid, by=r.by, at=r.at, residue=r.residue) for r in doc.review
    }
    name = sync if doc.sync is None else doc.sync
    return Ledger(sync=name, reviews=tuple(reviews[p] for p in sorted(reviews)))


MAX_LEDGERS = 256  # earlier ledgers read for overlay reviews


def earlier_ledgers(root: Path, sync: str) -> tuple[Ledger, ...]:
    """The ledgers of other syncs under ``<root>/sop/reviews/``, newest name last (their names
    sort by upstream base): at most ``MAX_LEDGERS``, each read as :func:`read_ledger` does."""
    folder = root / LEDGER_DIR
    if safefs.input_kind(folder, root=root) != "dir":
        return ()
    own = file_safe(sync) + ".toml"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml") and p.name != own)
    return tuple(read_ledger(folder / name, name[: -len(".toml")]) for name in names[-MAX_LEDGERS:])


def record(ledger: Ledger, reviews: Iterable[Review]) -> Ledger:
    """A new ledger with ``reviews`` added, each replacing any earlier review of its path."""
    by_path = {r.path: r for r in ledger.reviews}
    for r in reviews:
        by_path[r.path] = r
    return Ledger(sync=ledger.sync, reviews=tuple(by_path[p] for p in sorted(by_path)))


HEADER = "vimesync review ledger: edit with `vimesync audit review PATH... --by NAME`"


def _entry(r: Review, table: Any = None) -> Any:
    """``table`` (an existing entry, its comments kept) or a new one, set to ``r``."""
    if table is None:
        table = tomlkit.table()
    else:  # the blank lines after an entry are the array's to place, or each rewrite adds one
        body = table.value.body
        while body and body[-1][0] is None and isinstance(body[-1][1], tomlkit.items.Whitespace):
            body.pop()
    for key in ("path", "oid", "by", "at", "residue"):
        value = getattr(r, key)
        if value:
            table[key] = value
        elif key in table:
            del table[key]
    return table


def _document(ledger: Ledger, doc: tomledit.TOMLDocument) -> tomledit.TOMLDocument:
    """``doc`` (the ledger file as it was, comments and unknown keys kept) updated to ``ledger``."""
    if not doc.body:
        doc.add(tomlkit.comment(HEADER))
    doc["sync"] = ledger.sync
    by_path: dict[str, Any] = {}
    for table in tomledit.standard_aot(doc, "review"):
        path = table.get("path")
        if isinstance(path, str):
            by_path.setdefault(path, table)  # a duplicate: one entry (the first's comments) remains
    if ledger.reviews:
        aot = tomlkit.aot()
        for r in ledger.reviews:
            aot.append(_entry(r, by_path.get(r.path)))
        doc.append("review", aot)
    return doc


def write_ledger(path: Path, ledger: Ledger) -> None:
    """Write atomically: a reader sees the old ledger or the new one, never half of one. Missing
    folders are created; a symlink at the file or a folder on its way is refused. What a person
    wrote in the file besides our keys (comments, other keys) is kept. A path (or name) that is
    not UTF-8 cannot be written as TOML: BadInput naming it, nothing written."""
    for r in ledger.reviews:
        for what, value in (("path", r.path), ("--by", r.by)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput(
                    f"{visible(value)}: {what} is not UTF-8, so the review ledger cannot record it",
                    hint="rename the file to a UTF-8 name" if what == "path" else None,
                ) from None
    root = _root(path)
    doc = _document(ledger, tomledit.load(path, root=root))
    tomledit.write(path, doc, root=root, mkdirs=True, what="review ledger")
