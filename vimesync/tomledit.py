"""Rewriting a TOML file that people also edit by hand (review ledgers; later pins and sop records):
what a person wrote besides the keys we set (comments, blank lines, key order, other keys) survives
a rewrite, and every string is escaped by a TOML library, never by hand.

The file is read through ``safefs`` (no symlink, regular file, bounded size) and checked by
``safefs.loads_toml`` (bounded nesting and integers, a clean ConfigError naming the file and line)
*before* tomlkit sees it, so tomlkit only ever parses text that tomllib accepted. Writes go through
``safefs.write_atomic``; a value that cannot be encoded as UTF-8 (a non-UTF-8 file name decoded with
surrogateescape) is a BadInput naming it, and nothing is written. ::

    doc = tomledit.load(path, root=root)          # a new empty document when the file is missing
    doc["sync"] = "a..b"
    tomledit.write(path, doc, root=root, what="review ledger")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.toml_document import TOMLDocument

from vimesync import safefs
from vimesync.errors import BadInput

__all__ = ["TOMLDocument", "dumps", "load", "loads", "standard_aot", "standard_tables", "write"]


def loads(text: str, *, where: str) -> TOMLDocument:
    """Parse ``text`` keeping its comments and layout; ConfigError naming ``where`` when it is not
    TOML or is hostile (the same checks and messages as every other TOML input)."""
    safefs.loads_toml(text, where=where)
    return tomlkit.parse(text)


def load(
    path: Path, *, root: Path | str | None = None, max_bytes: int = safefs.MAX_CONFIG_BYTES
) -> TOMLDocument:
    """The document at ``path``, or a new empty one when there is no file there."""
    if safefs.input_kind(path, root=root) == "missing":
        return tomlkit.document()
    return loads(safefs.read_text_input(path, root=root, max_bytes=max_bytes), where=str(path))


def _standard(value: Any) -> bool:
    """A ``[table]`` written as such: not an inline table, not dotted keys (tomlkit's proxy)."""
    return isinstance(value, tomlkit.items.Table) and not isinstance(value, tomlkit.items.InlineTable)


def standard_tables(doc: TOMLDocument | Any, key: str) -> Any:
    """``doc[key]`` as a super-table of standard ``[key.NAME]`` tables, made when missing.
    ``doc`` may itself be such a table (``[tests.SUITE.SHA]``: called for ``tests``, then ``SUITE``).

    TOML lets a person write the same tables inline (``key = { a = { ... } }``) or as dotted keys
    (``key.a.x = 1``); tomlkit edits those shapes badly (an inline table cannot take a table;
    dotted keys were rewritten into a file our reader refused). Such a part is rewritten in the
    standard shape with the same values (its comments cannot be kept); the rest is untouched."""
    table = doc.get(key)
    if table is not None and _standard(table) and all(_standard(v) for v in table.values()):
        return table
    values = table.unwrap() if table is not None else {}
    if table is not None:
        del doc[key]
    table = tomlkit.table(is_super_table=True)
    for name, inner in values.items():
        sub = tomlkit.table()
        sub.update(inner if isinstance(inner, dict) else {})
        table[name] = sub
    doc[key] = table
    return table


def standard_aot(doc: TOMLDocument, key: str) -> list[Any]:
    """The tables of ``doc[key]`` (an array of tables, ``[[key]]``, or the same written as an
    inline array ``key = [{...}]``), removed from ``doc`` for the caller to write back."""
    old = doc.get(key)
    if old is None:
        return []
    if isinstance(old, tomlkit.items.AoT):
        tables = list(old.body)
    else:  # an inline array of inline tables: the same values, as standard tables
        tables = []
        for item in old.unwrap() if isinstance(old, tomlkit.items.Array) else []:
            table = tomlkit.table()
            table.update(item if isinstance(item, dict) else {})
            tables.append(table)
    del doc[key]
    return tables


def dumps(doc: TOMLDocument | dict[str, Any]) -> str:
    return tomlkit.dumps(doc)


def write(
    path: Path, doc: TOMLDocument, *, root: Path | str | None = None, mkdirs: bool = False, what: str
) -> None:
    """Write ``doc`` to ``path`` atomically (a reader sees the old file or the new one)."""
    text = dumps(doc)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[max(0, exc.start - 20) : exc.end + 20]
        raise BadInput(
            f"{what} {path}: a value is not UTF-8 ({safefs.excerpt(bad)}), nothing written"
        ) from None
    safefs.write_atomic(path, data, root=root, mkdirs=mkdirs, what=what)
