"""Markdown read back the way GitHub reads it (CommonMark + GFM tables, markdown-it-py): the tables
a body holds, cell by cell, and its HTML (tests only)."""

from __future__ import annotations

from markdown_it import MarkdownIt


def _parser() -> MarkdownIt:
    # GitHub renders raw HTML (sanitised later); keep it on, so an unescaped tag shows up as one
    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")


def tables(markdown: str) -> list[list[list[str]]]:
    """Every table: its rows (the header first), each a list of the cells' inline source."""
    found: list[list[list[str]]] = []
    row: list[str] = []
    cell: str | None = None
    for tok in _parser().parse(markdown):
        if tok.type == "table_open":
            found.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            cell = ""
        elif tok.type == "inline" and cell is not None:
            cell = tok.content
        elif tok.type in ("th_close", "td_close") and cell is not None:
            row.append(cell)
            cell = None
        elif tok.type == "tr_close":
            found[-1].append(row)
    return found


def html(markdown: str) -> str:
    return _parser().render(markdown)
