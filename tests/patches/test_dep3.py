from __future__ import annotations

import pytest

from vimesync.patches.dep3 import parse_dep3

DEBIAN = b"""\
Description: Fix the frobnicator on big-endian
 The frobnicator assumed little-endian words.
 .
 This swaps them where needed.
Author: Jane Doe <jane@example.org>
Origin: upstream, https://github.com/x/y/commit/abc123
Bug: https://github.com/x/y/issues/42
Bug-Debian: https://bugs.debian.org/123456
Forwarded: not-needed
Reviewed-by: Joe <joe@example.org>
Last-Update: 2024-01-31
Applied-Upstream: 1.2.3, https://github.com/x/y/commit/abc123
---
This line is after the separator: Ignored: yes
"""


def test_debian_style_header() -> None:
    d = parse_dep3(DEBIAN)
    assert d is not None
    assert d.description == (
        "Fix the frobnicator on big-endian\n"
        "The frobnicator assumed little-endian words.\n\nThis swaps them where needed."
    )
    assert d.summary == "Fix the frobnicator on big-endian"
    assert d.get("Bug-Debian") == "https://bugs.debian.org/123456"
    assert d.get("origin") == "upstream, https://github.com/x/y/commit/abc123"
    assert d.get("last-update") == "2024-01-31" and d.get("applied-upstream") is not None
    assert d.get("ignored") is None
    assert [k for k, _ in d.fields][:3] == ["description", "author", "origin"]
    assert d.text == DEBIAN.decode()


def test_format_patch_mail() -> None:
    mail = b"""\
From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001
From: =?UTF-8?q?Ren=C3=A9=20Dupont?= <rene@example.org>
Date: Tue, 14 Nov 2023 22:53:20 +0000
Subject: [PATCH 2/3] engine: keep weights on pull
 across a long subject line

Body paragraph one explains why.
It has two lines.

Signed-off-by: Ren\xc3\xa9 <rene@example.org>
---
 engine/x.py | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

"""
    d = parse_dep3(mail)
    assert d is not None
    assert d.get("from") == "Ren\u00e9 Dupont <rene@example.org>"
    assert d.get("subject") == "engine: keep weights on pull across a long subject line"
    assert d.summary == "engine: keep weights on pull across a long subject line"
    assert d.body == "Body paragraph one explains why.\nIt has two lines."
    assert d.get("signed-off-by") == "Ren\u00e9 <rene@example.org>"


def test_free_text_then_fields_and_stop_at_diff() -> None:
    header = b"Some prose about the patch: it is good.\n\nSubject: short\nForwarded: no\n\n"
    header += b"diff --git a/x b/x\nBug: 1\n"
    d = parse_dep3(header)
    assert d is not None and d.description == "short" and d.get("bug") is None
    assert d.body == "Some prose about the patch: it is good."


@pytest.mark.parametrize("header", [b"", b"\n\n", b"just some words\nand more\n", b"http://example.org/x\n"])
def test_no_fields_means_no_dep3(header: bytes) -> None:
    assert parse_dep3(header) is None


def test_never_crashes_on_junk() -> None:
    junk = bytes(range(256)) * 4 + b"\nDescription: \xff\xfe ok\n =?bad?=\n"
    d = parse_dep3(junk)
    assert d is None or isinstance(d.text, str)
    d2 = parse_dep3(b"Subject: =?UTF-8?B?!!!notbase64?=\n")
    assert d2 is not None and d2.get("subject")


def test_description_on_continuation_lines_only() -> None:
    d = parse_dep3(b"Description:\n Long text starts here\n and goes on.\nAuthor: X\n")
    assert (
        d is not None
        and d.description == "Long text starts here\nand goes on."
        and d.summary == "Long text starts here"
    )


@pytest.mark.slow
def test_long_continuations_are_joined_once() -> None:
    # 8 MB of continuation lines (cap lifted): growing the value line by line copied it every
    # line (3 MB: 25 s, 8 MB: minutes); one join is linear.
    lines = [b" line %d of a long description\n" % i for i in range(250_000)]
    header = b"Description: first\n" + b"".join(lines) + b"Subject: s\n" + b" folded\n" * 250_000
    d = parse_dep3(header, max_bytes=len(header))
    assert d is not None and d.description is not None
    assert d.description.count("\n") == 250_000
    assert d.description.endswith("line 249999 of a long description")
    subject = d.get("subject")
    assert subject is not None and subject.startswith("s folded folded") and subject.count(" ") == 250_000


def test_mime_decoding_is_bounded() -> None:
    # 288 KB of encoded-word starts: the standard decoder rescans the line (55 s). A value over
    # MAX_MIME_CHARS keeps its raw text; a short one is still decoded.
    hostile = "=?a?q?x" * 41_000
    header = b"Subject: " + hostile.encode() + b"\nFrom: =?UTF-8?q?Caf=C3=A9?= <c@x>\n"
    d = parse_dep3(header, max_bytes=1 << 20)
    assert d is not None and d.get("subject") == hostile and d.get("from") == "Café <c@x>"


def test_fields_after_the_header_cap_are_ignored() -> None:
    # Only the first MAX_HEADER_BYTES are read for fields (the default cap); text keeps it all.
    from vimesync.patches.dep3 import MAX_HEADER_BYTES

    filler = b"Description: x\n" + b" filler line\n" * (MAX_HEADER_BYTES // 13 + 1)
    d = parse_dep3(filler + b"Author: late\n" + b" =?a?q?x" * 1000 + b"\n")
    assert d is not None and d.get("author") is None and d.text.endswith("=?a?q?x\n")
    assert d.description is not None and len(d.description) < MAX_HEADER_BYTES
