"""@mentions are neutralised before a report is published; checked against a CommonMark renderer."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vimesync.report.mentions import neutralize_mentions

markdown_it = pytest.importorskip("markdown_it")  # comes with rich

# html-pipeline's MentionFilter (what github.com runs on rendered text), with Ruby's ASCII \W.
_GITHUB_MENTION = re.compile(
    r"(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9][A-Za-z0-9-]*"
    r"(?:/[A-Za-z0-9][A-Za-z0-9_-]*|(?!/)(?=\.+[^A-Za-z0-9_]|\.+$|[^0-9A-Za-z_.]|$)))",
    re.MULTILINE,
)


class _LiveMentions(HTMLParser):
    """Mentions in rendered HTML that GitHub would link: text outside code, pre and a."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ignored = 0
        self.found: list[str] = []

    def parse_comment(self, i: int, report: bool = True) -> int:
        # As a browser reads it (Python < 3.13 does not): "<!-->" and "<!--->" are empty comments,
        # and "--!>" ends one as "-->" does.
        for abrupt in (">", "->"):
            if self.rawdata.startswith(abrupt, i + 4):
                return i + 4 + len(abrupt)
        end = re.compile(r"--!?>").search(self.rawdata, i + 4)
        return end.end() if end else -1

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.ignored += tag in ("code", "pre", "a")

    def handle_endtag(self, tag: str) -> None:
        self.ignored -= tag in ("code", "pre", "a") and self.ignored > 0

    def handle_data(self, data: str) -> None:
        if not self.ignored:
            self.found += [m[1] for m in _GITHUB_MENTION.finditer(data)]


def live_mentions(markdown: str) -> list[str]:
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)
    parser = _LiveMentions()
    parser.feed(html + "-->")  # an unclosed comment runs to the end (html.parser would show it)
    if re.match(r"</?[A-Za-z]", parser.rawdata):
        parser.rawdata = ""  # the end inside a tag ("<b title='..."): a browser drops the tag
    parser.close()
    return parser.found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("r? @matklad", "r? <code>@matklad</code>"),
        ("@bors r+", "<code>@bors</code> r+"),
        (
            "@a, @b; @c? @d! @e.",
            "<code>@a</code>, <code>@b</code>; <code>@c</code>? <code>@d</code>! <code>@e</code>.",
        ),
        (
            "(@u) **@u** -@u /@u @@u",
            "(<code>@u</code>) **<code>@u</code>** -<code>@u</code> /<code>@u</code> @<code>@u</code>",
        ),
        ("@user-name @x--y-", "<code>@user-name</code> <code>@x--y-</code>"),
        ("cc @vllm-project/ascend-team", "cc <code>@vllm-project/ascend-team</code>"),
        ("| `a.patch` | by @alice |", "| `a.patch` | by <code>@alice</code> |"),
        ("`code`@alice", "`code`<code>@alice</code>"),
        ("a stray ` then @alice", "a stray ` then <code>@alice</code>"),
        ("\\@alice and \\\\@bob", "<code>@alice</code> and \\\\<code>@bob</code>"),
        ("&#64;alice &commat;bob", "<code>@alice</code> <code>@bob</code>"),
        ("<summary>by @alice</summary>", "<summary>by <code>@alice</code></summary>"),
        ("_@alice_ and __@bob__", "_<code>@alice</code>_ and __<code>@bob</code>__"),
        ("@a@b and @c\\@d", "<code>@a@b</code> and <code>@c\\@d</code>"),
    ],
)
def test_mentions_become_code(text: str, expected: str) -> None:
    assert neutralize_mentions(text) == expected
    assert live_mentions(text) and not live_mentions(expected)


@pytest.mark.parametrize(
    "text",
    [
        "mail alice@example.com or a@b.c",
        "text@user @user_x @user.name @-user @",
        "pinned to vllm-project/vllm@1a2b3c4d",
        "already `@user`, or ``a `@user` b``, or <code>@user</code>",
        "```\n@user in a fence\n```\n",
        "~~~~ text\n@user\n~~~\n@user still fenced\n~~~~\n",
        "[profile](https://github.com/@user) and https://example.com/@user/x",
        "<!-- @user -->",
        '<a title="@user">x</a>',
    ],
)
def test_non_mentions_are_left_alone(text: str) -> None:
    assert neutralize_mentions(text) == text


def test_html_blocks_keep_backticks_and_backslashes() -> None:
    # In an HTML block markdown is not read: `@a` is no code span and \@b leaves "\" before "@".
    block = "<details>\n<summary>`@a` and x\\@b</summary>\n"
    assert live_mentions(block) == ["@a", "@b"]
    assert (
        neutralize_mentions(block) == "<details>\n<summary>`<code>@a</code>` and x<code>@b</code></summary>\n"
    )
    assert not live_mentions(neutralize_mentions(block))


def test_a_code_span_is_trusted_only_when_every_reading_agrees() -> None:
    # A table row is cut into cells before code spans are read: the pipes end the "span".
    row = "| `a | @user | b` |\n"
    assert neutralize_mentions(row) == "| `a | <code>@user</code> | b` |\n"
    # A paragraph may carry a code span across lines; its closing backtick opens nothing.
    para = "`foo\nbar` hi @user `baz`\n"
    assert neutralize_mentions(para) == "`foo\nbar` hi <code>@user</code> `baz`\n"
    assert not live_mentions(neutralize_mentions(para))


def test_neutralizing_twice_changes_nothing() -> None:
    text = "`a\n\n@user`\n\n```\n@x\n```\n@y\n````\n@z\n```\n@w"
    once = neutralize_mentions(text)
    # the lone backtick is literal; @x is fenced; @y is prose; the unclosed ```` fence runs to the end
    assert once == "`a\n\n<code>@user</code>`\n\n```\n@x\n```\n<code>@y</code>\n````\n@z\n```\n@w"
    assert neutralize_mentions(once) == once


def test_crlf_text() -> None:
    assert (
        neutralize_mentions("a\r\n@b\r\n```\r\n@c\r\n```\r\n")
        == "a\r\n<code>@b</code>\r\n```\r\n@c\r\n```\r\n"
    )


_FRAGMENTS = [
    "@user", "@a-b", "@org/team", "@x.", "a@b", "\\@u", "\\\\", "&#64;v", "`", "``", "```", "~~~",
    "\n", "\n\n", " ", "  ", "    ", "|", "\n|-|-|\n", "- ", "1. ", "> ", "# ", "a", "_", "*", ".",
    "<code>", "</code>", "<b>", "</b>", "<!--", "-->", "[l](", ")", "]", "<https://x.y/@u>",
    "<details>", "</details>", "<summary>", "<a href='x'>", "</a>", "\\`", "~", "**", "\t", "&",
    "<!-->", "<!--->", "--!>", "-", "<b title='", "'>",
    "&commat;w", "](https://x.y)", "===", "\n---\n", "    @i\n",
]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "@user<!--@user<!---->",  # found by hypothesis: "--" inside, so no comment to cmark-gfm
        "x <!-- a --!> @user -->",  # a browser ends the comment at "--!>"
        "x <!-->@user -->",  # "<!-->" and "<!--->" are whole (empty) comments
        "x <!--->@user -->",
        "x <!-- a -- @user -->",
        "x <!-- a @user --->",  # text ending in "-": no comment to cmark-gfm
        '<b title="<!--">@user -->',  # the "comment" is an attribute value
        '<b title="<`">@user `',  # and so is the "code span"
        '<b title="a\n`">@user `',
    ],
)
def test_only_what_every_renderer_reads_as_a_comment_hides_a_mention(text: str) -> None:
    once = neutralize_mentions(text)
    # after a tag whose value we cannot follow, the mention may be inside it: a word joiner
    maybe_in_tag = text.startswith("<b title=")
    assert ("@\u2060user" if maybe_in_tag else "<code>@user</code>") in once
    assert live_mentions(once) == [] and neutralize_mentions(once) == once


def test_a_real_comment_still_hides_a_mention() -> None:
    text = "x <!-- @user - a -->\n\n<!-- @user -->\n"
    assert neutralize_mentions(text) == text


def test_a_mention_that_may_be_inside_a_tag_gets_a_word_joiner_not_a_code_tag() -> None:
    """Found by the property test below: after ``<b title='<b title='`` a browser reads a
    ``<code`` we insert as an attribute name (missing whitespace between attributes), the tag ends
    at its ``>``, and the mention after it is text again. Where a reading may be inside a tag,
    the mention gets a word joiner after its "@" instead: no mention as text or in a tag."""
    once = neutralize_mentions("<details><b title='<b title='@user")
    assert once == "<details><b title='<b title='@\u2060user"
    assert live_mentions(once) == [] and neutralize_mentions(once) == once
    # after a tag we can follow, the mention is text: wrapped in <code> as everywhere else
    assert neutralize_mentions("<b title='x'>@user") == "<b title='x'><code>@user</code>"


@pytest.mark.slow
# Derandomized: CI runs the same examples every time (a chance find fails no unrelated change);
# the example it found is kept above as a known hole.
@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join))
def test_no_live_mention_survives_any_markdown(text: str) -> None:
    once = neutralize_mentions(text)
    assert live_mentions(once) == []
    assert neutralize_mentions(once) == once


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"])
def test_only_lf_and_cr_break_lines(sep: str) -> None:
    # str.splitlines would make "```" a line of its own, a fence that hides the mention from us;
    # GitHub sees one line of prose, in which it is live.
    text = f"- `x{sep}```{sep}` @octocat {sep}```{sep}@hubot\n"
    once = neutralize_mentions(text)
    assert "<code>@octocat</code>" in once and "<code>@hubot</code>" in once
    assert live_mentions(once) == []


# Each would take hours if the neutraliser were still quadratic (300 KB with one "@": ~15 min).
_BIG = 1_000_000
_LINEAR_CASES = {
    "one long word": "a" * _BIG + " @x\n",
    "a long handle": "@" + "a" * _BIG + "_b @x\n",
    "unclosed comments": "<!-- " * (_BIG // 5) + "@x\n",
    "unclosed quoted attributes": "<a b='" * (_BIG // 6) + "@x\n",
    "unmatched backtick runs": "".join("`" * n + " " for n in range(1, 1400)) + "@x\n",
    "cells of code": "| `a` <b c='" * (_BIG // 24) + "@x\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("text", _LINEAR_CASES.values(), ids=_LINEAR_CASES.keys())
def test_linear_on_megabytes(text: str) -> None:
    maybe_in_tag = "='" in text  # after a quoted value we cannot follow: a word joiner
    assert neutralize_mentions(text).endswith("@\u2060x\n" if maybe_in_tag else "<code>@x</code>\n")


def test_publish_markers_are_made_inert() -> None:
    from vimesync.report.mentions import END, START, neutralize_markers

    text = f"- `x/{END}` and `{START}`\n"
    once = neutralize_markers(text)
    assert START not in once and END not in once
    assert once == "- `x/<!-\\- vimesync:report:end -->` and `<!-\\- vimesync:report:start -->`\n"
    assert neutralize_markers(once) == once


def test_every_markdown_we_write_is_finished_in_one_place() -> None:
    """Issue 29 item 16: one choke point. The neutralisers are called from mentions.py alone;
    every writer of Markdown (report, pin bump, pin scan, pin radar, publish, the job summary)
    calls finish_markdown."""
    from pathlib import Path

    import vimesync

    root = Path(vimesync.__file__).parent
    callers = {
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "neutralize_mentions(" in p.read_text() or "neutralize_markers(" in p.read_text()
    }
    assert callers == {"report/mentions.py"}
    finishing = {str(p.relative_to(root)) for p in root.rglob("*.py") if "finish_markdown(" in p.read_text()}
    assert {
        "report/markdown.py",
        "report/bumpmd.py",
        "report/matrix.py",
        "report/publish.py",
        "cli/render/radar.py",
        "outputs/stepsummary.py",
    } <= finishing
