"""Markdown text the report's sections share: escaping (titles, paths and descriptions come from
repositories), code spans, links, capped lists."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vimesync.report.links import Ref, pr_ref
from vimesync.report.mentions import CLOSING_KEYWORD
from vimesync.text import plural, visible

DASH = "—"
MAX_LIST = 50  # longest list of paths/failures printed before "… and N more"
MAX_REFS = 10  # references shown per patch row (the JSON report keeps them all)

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")
_NEWLINES = re.compile(r"\r\n|\r|\n")
_BARE = re.compile(r"(?<![\w/#&\\])#(\d+)\b")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_AFTER_KEYWORD = re.compile(rf"{CLOSING_KEYWORD}[ \t]*:?[ \t]*\Z")
_HTTP = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:[/?#]|$)", re.IGNORECASE)
# What a link destination keeps as it is; anything else (space, <, >, |, quotes, backticks,
# brackets, parentheses, backslash, controls, non-ASCII) is percent-encoded.
_URL_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~:/?#@!$&+,;=%]")


# ---------------------------------------------------------------------------------------------
# Escaping


def escape(text: str, *, repo: str | None = None) -> str:
    """Inline text: markdown punctuation backslash-escaped, newlines as spaces, and bare ``#N``
    linked to ``repo`` (or, with no repo, quoted as code) rather than left for GitHub to link
    to the wrong repository."""
    out = _SPECIAL.sub(r"\\\1", visible(_NEWLINES.sub(" ", text.strip())))

    def ref(m: re.Match[str]) -> str:
        # After a closing keyword ("closes #9") a link would still read as a closing reference
        # to some renderers: code, as neutralize_mentions makes "closes owner/repo#9".
        if _AFTER_KEYWORD.search(out, max(0, m.start() - 24), m.start()):
            return code(m[0], in_table=True)
        # Left bare, GitHub would link "#N" to the repository the report is published in.
        return link(pr_ref(repo, int(m.group(1))))

    return _BARE.sub(ref, out)


def cell(text: str, *, repo: str | None = None) -> str:
    """Text for a table cell: escaped like :func:`escape`, with line breaks kept as ``<br>``."""
    parts = [escape(line, repo=repo) for line in _NEWLINES.split(text.strip())]
    return "<br>".join(p for p in parts if p)


def code(text: str, *, in_table: bool = False) -> str:
    """An inline code span that survives backticks (longer fence) and, in tables, pipes."""
    text = visible(_NEWLINES.sub(" ", text))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def safe_url(url: str) -> str | None:
    """``url`` as a link destination: only http(s) to a plain host, every character that could
    end the destination, the link, the table cell or the line percent-encoded; else None."""
    if not _HTTP.match(url):
        return None  # javascript:, data:, mailto:, relative: shown as code, never linked
    return _URL_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m[0].encode("utf-8", "replace")), url)


def link(ref: Ref) -> str:
    url = safe_url(ref.url) if ref.url else None
    if url is None:
        # "#N" of an unknown repository, or not a web address: shown, never linked.
        return code(ref.text, in_table=True)
    text = _SPECIAL.sub(r"\\\1", visible(_NEWLINES.sub(" ", ref.text)))
    return f"[{text}]({url})"


def rev(value: str) -> str:
    """A pin's revision: a commit sha as it is, anything else (a branch, a tag, text from the pin
    file) as code."""
    return value if _SHA.fullmatch(value) else code(value)


def _capped(lines: Sequence[str], what: str) -> list[str]:
    """At most MAX_LIST lines, then "… and 3 more paths" (``what`` is the singular)."""
    if len(lines) <= MAX_LIST:
        return list(lines)
    return [*lines[:MAX_LIST], f"- … and {plural(len(lines) - MAX_LIST, 'more ' + what)}"]
