"""Neutralise GitHub @mentions in markdown, so that publishing a report pings nobody.

A mention becomes ``<code>@name</code>``. GitHub links and notifies a mention only in ordinary
text: never inside ``code``, ``pre`` or ``a`` elements. Dependabot wraps mentions in ``<code>`` for
the same reason; homu and bors write backticks. We use the HTML element rather than backticks
because inserted backticks can pair with a stray backtick elsewhere in the text and turn the
mention back into prose, while ``<code>`` cannot. It renders exactly as a code span, keeps the
handle readable and copyable, and adds no invisible character (zero-width space or joiner),
except where a reading may be inside a tag whose quoted value we cannot follow: there an inserted
``<code`` could be read as an attribute name and its ``>`` end the tag, so the mention becomes
``@`` + U+2060 WORD JOINER + name, no mention as text or inside a tag.

Left alone: fenced code blocks, code spans, http(s) URLs, HTML tags and comments (those that
cmark-gfm, CommonMark 0.31 and a browser all read as one: see ``_protected_spans``),
``<code>`` elements (so neutralising twice changes nothing), and ``@`` after a letter or digit
(``a@b.c``, ``repo@sha``), which GitHub does not treat as a mention either.

Knowing what is a code span needs the block structure: a table cell or a list item ends one, a
continued paragraph line does not, and in an HTML block backticks are plain text. Without a full
markdown parser, a mention is left alone only when it is inside a code span (or a tag) under every
reading tried: blank-line paragraphs, block starts, single lines, table cells, HTML blocks. A
wrong guess therefore shows a ``<code>`` tag inside a code span; it does not leave a live mention.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator

_HANDLE = r"[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][A-Za-z0-9_-]*)?"  # user, or org/team
_AT = r"(?:\\?@|&#0*64;|&#[xX]0*40;|&commat;)"  # "\@" and the entities render as "@" too
# GitHub ends a handle at anything but a word character or a dot before a letter or digit (@a.b
# is no mention). "_" may be a boundary on both sides: in _@a_ it is emphasis, gone once rendered.
_MENTION_END = r"(?![A-Za-z0-9]|_+[A-Za-z0-9]|\.[A-Za-z0-9])"

# CommonMark inline HTML and autolinks, which take precedence over code spans when they come first.
# None crosses a blank line: that ends the paragraph, and with it any inline construct.
_SP = r"(?:[ \t]*(?:\r?\n[ \t]*)?)"  # optional space, at most one line break
_SP1 = r"(?:[ \t]+(?:\r?\n[ \t]*)?|\r?\n[ \t]*)"  # the same, at least one character
# A quoted value stops at "<" (CommonMark allows it there): otherwise every "<a b='" of a long
# line would rescan the line, quadratic. Not seeing such a tag only ever neutralises more.
_ATTR = rf"""{_SP1}[A-Za-z_:][A-Za-z0-9_.:-]*(?:{_SP}={_SP}(?:[^\s"'=<>`]+|'[^'\n<]*'|"[^"\n<]*"))?"""
# Comments are checked in _protected_spans (a regex would rescan the rest of the paragraph per "<!--").
_HTML = (
    rf"<[A-Za-z][A-Za-z0-9-]*(?:{_ATTR})*{_SP}/?>"
    rf"|</[A-Za-z][A-Za-z0-9-]*{_SP}>"
    r"|<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>"
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+>"
)
_ESCAPE = r"\\[!-/:-@\[-`{-~]"

# A tag up to the opening quote of a value that _HTML does not follow (it holds "<" or a line
# break, or never closes): maybe a tag, whose value hides what looks like a comment or a code span.
_QUOTE = rf"""<[A-Za-z][A-Za-z0-9-]*(?:{_ATTR})*{_SP1}[A-Za-z_:][A-Za-z0-9_.:-]*{_SP}={_SP}["']"""
_INLINE_TOKENS = re.compile(
    rf"(?P<escape>{_ESCAPE})|(?P<comment><!--)|(?P<html>{_HTML})|(?P<quote>{_QUOTE})|(?P<ticks>`+)",
    re.DOTALL,
)
_COMMENT_CLOSE = re.compile(r"-->")
_COMMENT_BREAK = re.compile(r"\n[ \t]*\r?\n")  # a blank line: a comment cannot cross it
_DOUBLE_DASH = re.compile(r"--")
_TICK_RUNS = re.compile(r"`+")
# GitHub breaks lines at LF, CR and CRLF only: not at U+2028, U+0085, VT or FF as str.splitlines.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# A closing keyword and the issue it would close when the sync PR merges ("closes #1", "Fixes:
# vime-org/vime#2", "resolves https://github.com/vime-org/vime/issues/3", "fixed GH-4"): in an
# upstream title carried into the report, merging the sync would close a downstream issue.
_KEYWORD = r"(?<![A-Za-z0-9_])(?i:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?![A-Za-z0-9_])"
_REF = (
    r"(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#[0-9]+|(?i:GH)-[0-9]+"
    r"|(?i:https?://(?:www\.)?github\.com)/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(?:issues|pull)/[0-9]+"
)
_CLOSING = re.compile(_KEYWORD)
CLOSING_KEYWORD = _KEYWORD  # the report's escaping quotes a "#N" after one as code too
_TOKENS = re.compile(
    rf"(?P<closing>(?P<keyword>{_KEYWORD}[ \t]*:?[ \t]*(?:\r?\n[ \t]*)?)(?P<ref>{_REF}){_MENTION_END})|"
    # "@a@b" mentions only a, but once a is wrapped "@b" would begin a text node: take it along.
    # "\@" counts even after a letter: in an HTML block the backslash stays, and precedes the @.
    # <code>@a</code> may be ours from an earlier pass: left as it is if the tags are real.
    rf"(?P<mention>(?P<open><code>)?(?:(?<![A-Za-z0-9]){_AT}|\\@)"
    rf"(?P<handle>{_HANDLE}(?:{_AT}[A-Za-z0-9_./-]*)*){_MENTION_END}(?P<close></code>)?)"
    rf"|(?P<keep>{_ESCAPE}"
    r"|(?<![^\s*_~(])(?:https?://|www\.)[^\s<>()]*"  # what GitHub autolinks, or a link's URL
    # a@b.c, repo@sha: no mention. Tried at the start of a word only: from every letter of a
    # long word it would rescan the word (quadratic).
    r"|(?<![A-Za-z0-9_])[A-Za-z0-9_]*[A-Za-z0-9](?:@[A-Za-z0-9_.-]*[A-Za-z0-9])+)",
    re.DOTALL,
)
_AT_FORMS = re.compile(_AT)
_FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")  # a backtick fence's info has no backtick
_DELIMITER_ROW = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\r?\n?$")
_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|"
    "dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|"
    "iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|"
    "summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_HTML_BLOCK_START = re.compile(  # CommonMark's seven kinds of HTML block; 1-5 name their end
    rf"[ \t]*(?:(?P<raw><(?:pre|script|style|textarea)(?:[ \t>]|\r?\n?$))|(?P<comment><!--)"
    rf"|(?P<pi><\?)|(?P<cdata><!\[CDATA\[)|(?P<decl><![A-Za-z])"
    rf"|</?(?:{_BLOCK_TAGS})(?:[ \t>]|/>|\r?\n?$)"
    rf"|(?:<[A-Za-z][A-Za-z0-9-]*(?:{_ATTR})*{_SP}/?>|</[A-Za-z][A-Za-z0-9-]*{_SP}>)[ \t]*\r?\n?$)",
    re.IGNORECASE,
)
_HTML_BLOCK_END = {
    "raw": re.compile(r"</(?:pre|script|style|textarea)>", re.IGNORECASE),
    "comment": re.compile(r"-->"),
    "pi": re.compile(r"\?>"),
    "cdata": re.compile(r"\]\]>"),
    "decl": re.compile(r">"),
}
_CONTAINERS = re.compile(r"(?:[ \t]*(?:>[ \t]?|[-+*][ \t]+|[0-9]{1,9}[.)][ \t]+))*")
_BLOCK_START = re.compile(r"^ {0,3}(?:[-+*][ \t]|[0-9]{1,9}[.)][ \t]|#{1,6}(?:[ \t]|$)|>|\|)")
_BLANK = re.compile(r"^[ \t]*\r?\n?$")


WORD_JOINER = "\u2060"  # U+2060: no width, no break, not a handle character
START = "<!-- vimesync:report:start -->"
END = "<!-- vimesync:report:end -->"
# The sync bot's own block in its PR, its state line, and its dashboard issue (vimesync bot).
BOT_START = "<!-- vimesync:bot:start -->"
BOT_END = "<!-- vimesync:bot:end -->"
BOT_STATE = "<!-- vimesync:bot:state "
DASHBOARD = "<!-- vimesync:dashboard -->"
# Inside a code span (a file name, a hunk line) the marker text would be read back as a marker
# by the next --publish. "<!-\-" shows the same words and is no marker.
_INERT = {
    marker: marker.replace("<!--", "<!-\\-", 1)
    for marker in (START, END, BOT_START, BOT_END, BOT_STATE, DASHBOARD)
}


def finish_markdown(markdown: str) -> str:
    """Every Markdown text vimesync writes (the report, ``pin bump``, ``pin scan`` and ``pin
    radar`` bodies, the job summary, a published description) passes here last: no @mention
    pings anyone, no closing reference closes an issue when the PR merges, and no publish marker
    can be planted. Idempotent."""
    return neutralize_markers(neutralize_mentions(markdown))


def neutralize_markers(markdown: str) -> str:
    """``markdown`` with the publish markers' text made inert wherever it occurs."""
    for marker, inert in _INERT.items():
        markdown = markdown.replace(marker, inert)
    return markdown


def neutralize_mentions(markdown: str) -> str:
    """``markdown`` with every GitHub @mention outside code made ``<code>@name</code>``, and every
    issue reference after a closing keyword (``closes #1``) made ``closes <code>#1</code>``: no
    text we publish pings anyone or closes an issue when the PR merges."""
    out: list[str] = []
    prose: list[tuple[str, bool]] = []  # lines outside fences, and whether in an HTML block
    fence: str | None = None  # the opening fence while inside a fenced code block
    html: re.Pattern[str] | None | bool = False  # in an HTML block: its end (None: a blank line)
    lines = split_lines(markdown)
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is None:
            if html is False:
                html = _html_block_start(line)
            elif html is None and _BLANK.match(line):
                html = False
        in_html = html is not False
        if isinstance(html, re.Pattern) and html.search(line):
            html = False  # the block ends with this line
        if m and (in_html or "|" in line and i + 1 < len(lines) and _DELIMITER_ROW.match(lines[i + 1])):
            m = None  # plain text in an HTML block; a table header to some renderers: prose, to be safe
        if fence is None and m:
            out.append(_neutralize_prose(prose))
            prose.clear()
            fence = m[1]
            out.append(line)
        elif fence is not None:
            out.append(line)
            if m and m[1][0] == fence[0] and len(m[1]) >= len(fence) and not line[m.end() :].strip():
                fence = None
        else:
            prose.append((line, in_html))
    out.append(_neutralize_prose(prose))
    return "".join(out)


def split_lines(text: str) -> list[str]:
    """``text`` cut into lines as GitHub cuts it (LF, CR, CRLF), each with its line ending."""
    return _LINE.findall(text)


def _neutralize_prose(lines: list[tuple[str, bool]]) -> str:
    text = "".join(line for line, _ in lines)
    if "@" not in text and "&" not in text and not _CLOSING.search(text):
        return text
    html_blocks = _html_blocks(lines)
    # Per reading of the block structure: 1 in a code span, an HTML tag or a comment; <code> tags.
    masks: list[bytearray] = []
    code_tags: list[set[int]] = []
    in_tag = bytearray(len(text))  # 1 where some reading may be inside a tag we cannot follow
    for reading in (_paragraphs(text), _blocks(text), _lines(text), _cells(text), html_blocks):
        mask = bytearray(len(text))
        tags: set[int] = set()
        for start, end, code in reading:
            for a, b in _protected_spans(text, start, end, code=code, maybe_tag=in_tag):
                mask[a:b] = b"\x01" * (b - a)
                if text[a:b].lower() == "<code>":
                    tags.add(a)
        masks.append(mask)
        code_tags.append(tags)

    def sub(m: re.Match[str]) -> str:
        if m["closing"]:
            if all(mask[m.start("ref")] for mask in masks):
                return m[0]  # in code however the blocks are read: no reference
            return f"{m['keyword']}<code>{m['ref']}</code>"
        if not m["mention"]:
            return m[0]
        at = m.start("open") + len(m["open"]) if m["open"] else m.start()
        if all(
            mask[at] or (m["open"] and m["close"] and m.start() in tags)
            for mask, tags in zip(masks, code_tags, strict=True)
        ):
            return m[0]  # in code, or already in <code>, however the blocks are read
        if in_tag[at]:
            # Maybe inside a tag: a browser may read an inserted "<code" as an attribute name and
            # its ">" as the tag's end, making what follows text. A word joiner after the "@" is
            # no mention as text or in a tag, and adds no tag.
            handle = _AT_FORMS.sub("@" + WORD_JOINER, m["handle"])  # "@a\\@b": every "@" joined
            return f"{m['open'] or ''}@{WORD_JOINER}{handle}{m['close'] or ''}"
        return f"{m['open'] or ''}<code>@{m['handle']}</code>{m['close'] or ''}"

    return _TOKENS.sub(sub, text)


def _protected_spans(
    text: str, start: int, end: int, *, code: bool, maybe_tag: bytearray | None = None
) -> Iterator[tuple[int, int]]:
    """Code spans, HTML tags and comments in the inline text ``text[start:end]``, read left to
    right as CommonMark does: a backtick run opens a code span closed by the next run of the same
    length; a run without one is literal text. Linear: every closing run and comment end is looked
    up, never searched for again from each opener.

    A comment is one only where every renderer agrees: ``<!--``, then text without ``--`` that
    neither starts with ``>`` or ``->`` nor ends with ``-``, then ``-->``. CommonMark 0.31 ends a
    comment at the first ``-->`` and accepts ``<!-->``; older ones (cmark-gfm) reject any ``--``
    inside; the browser ends one at ``--!>`` and at ``<!-->``. After a tag whose quoted value we
    cannot follow, comments and code spans protect nothing: they may lie inside that value, and
    the rest of the span is marked in ``maybe_tag`` (we may be inside that tag)."""
    runs: dict[int, list[int]] | None = None  # backtick runs by length: their start positions
    close, blank, dashes = (_Next(text, end, p) for p in (_COMMENT_CLOSE, _COMMENT_BREAK, _DOUBLE_DASH))
    unsure = False  # after a maybe-tag: only tags (our own <code>) are still protected
    pos = start
    while m := _INLINE_TOKENS.search(text, pos, end):
        pos = m.end()
        if m["comment"] and not unsure:
            close_at = close.find(pos)
            if (
                close_at >= 0
                and dashes.find(pos) == close_at  # no "--" inside, and it does not end with "-"
                and text[pos] != ">"
                and not text.startswith("->", pos)
                and not 0 <= blank.find(pos) < close_at  # nor a blank line
            ):
                yield m.start(), close_at + 3
                pos = close_at + 3
        elif m["html"]:
            yield m.start(), m.end()
        elif m["quote"]:
            if maybe_tag is not None and not unsure:
                maybe_tag[m.start() : end] = b"\x01" * (end - m.start())
            unsure = True
            pos = m.start() + 1  # its attributes may hold tags of their own
        elif m["ticks"] and code and not unsure:
            if runs is None:
                runs = {}
                for r in _TICK_RUNS.finditer(text, start, end):
                    runs.setdefault(len(r[0]), []).append(r.start())
            n = len(m["ticks"])
            same = runs.get(n, [])
            i = bisect.bisect_left(same, pos)
            if i < len(same):
                yield m.start(), same[i] + n
                pos = same[i] + n


class _Next:
    """Where ``pattern`` next matches in ``text[:end]`` at or after a position, for positions that
    never decrease: each search starts past the last match found (linear over all calls)."""

    def __init__(self, text: str, end: int, pattern: re.Pattern[str]) -> None:
        self._text, self._end, self._pattern = text, end, pattern
        self._found: int | None = None  # the last answer (-1: none from there on)

    def find(self, pos: int) -> int:
        if self._found is None or 0 <= self._found < pos:
            m = self._pattern.search(self._text, pos, self._end)
            self._found = m.start() if m else -1
        return self._found


def _line_bounds(text: str) -> Iterator[tuple[int, int, str]]:
    pos = 0
    for line in split_lines(text):
        yield pos, pos + len(line), line
        pos += len(line)


def _grouped(text: str, starts_group: Callable[[str], bool]) -> Iterator[tuple[int, int, str]]:
    """Runs of non-blank lines, with their first line; a blank line ends a run, a line for which
    ``starts_group`` holds begins a new one."""
    begin: int | None = None
    first = ""
    end = 0
    for a, b, line in _line_bounds(text):
        if _BLANK.match(line):
            if begin is not None:
                yield begin, a, first
            begin = None
            continue
        if begin is not None and starts_group(line):
            yield begin, a, first
            begin = None
        if begin is None:
            begin, first = a, line
        end = b
    if begin is not None:
        yield begin, end, first


def _paragraphs(text: str) -> Iterator[tuple[int, int, bool]]:
    return ((a, b, True) for a, b, _ in _grouped(text, lambda line: False))


def _blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    return ((a, b, True) for a, b, _ in _grouped(text, lambda line: bool(_BLOCK_START.match(line))))


def _html_blocks(lines: list[tuple[str, bool]]) -> list[tuple[int, int, bool]]:
    """HTML blocks, in which backticks are plain characters, and the paragraphs between them."""
    out: list[tuple[int, int, bool]] = []
    pos = 0
    for in_html, group in itertools.groupby(lines, key=lambda item: item[1]):
        text = "".join(line for line, _ in group)
        if in_html:
            out.append((pos, pos + len(text), False))
        else:
            out += [(pos + a, pos + b, True) for a, b, _ in _grouped(text, lambda line: False)]
        pos += len(text)
    return out


def _html_block_start(line: str) -> re.Pattern[str] | None | bool:
    """False unless ``line`` (after any list or quote markers) begins an HTML block; then what
    ends it: a pattern on a line (this one included), or None for the next blank line."""
    containers = _CONTAINERS.match(line)  # always matches, maybe empty
    m = _HTML_BLOCK_START.match(line, containers.end() if containers else 0)
    if not m:
        return False
    kind = next((k for k in _HTML_BLOCK_END if m[k]), None)
    return _HTML_BLOCK_END[kind] if kind else None


def _lines(text: str) -> Iterator[tuple[int, int, bool]]:
    return ((a, b, True) for a, b, _ in _line_bounds(text))


def _cells(text: str) -> Iterator[tuple[int, int, bool]]:
    """Each line cut at unescaped pipes, as GFM cuts a table row before it reads code spans."""
    for a, b, line in _line_bounds(text):
        cut = a
        for m in re.finditer(r"\\.|\|", line):
            if m[0] == "|":
                yield cut, a + m.start(), True
                cut = a + m.end()
        yield cut, b, True
