"""DEP-3 patch headers (https://dep-team.pages.debian.net/deps/dep3/), parsed leniently.

Also reads ``git format-patch`` mail headers (From:, Subject: [PATCH] ...) and the commit
message after them. Input is untrusted free text: never raise, decode with replacement.
"""

from __future__ import annotations

import re
from email.header import decode_header, make_header

from vimesync.patches.model import Dep3

_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*)|$)")
# Mail header fields are folded, not multi-line: their continuation lines join with a space.
_MAIL_FIELDS = frozenset({"subject", "from", "date", "to", "cc"})
_SUBJECT_TAG = re.compile(r"^\s*(\[[^\]]*\]\s*)+")
# Lines that end a header: the format-patch/quilt separator, or the start of a diff.
_STOP = re.compile(r"^(---\s*$|diff |--- |\+\+\+ |@@ |Index: |={10,}\s*$)")


def _decode_mime(value: str) -> str:
    """Decode "=?UTF-8?q?Caf=C3=A9?=" -> "Café" in mail headers; other values unchanged."""
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except Exception:  # malformed encoded-words: keep the raw text
        return value


def parse_dep3(header: bytes) -> Dep3 | None:
    """Parse a patch's free-text header; None when it holds no ``Field: value`` line.

    Fields are read in every paragraph (keys lower-cased, order kept); lines indented with
    a space or tab continue the previous field: as new lines of a DEP-3 long description
    (" ." stands for an empty line), or unfolded with a space for mail fields; a paragraph
    that does not start with a field is free-form text and goes to ``body``. Reading stops at
    a "---" line or the first diff line. ``Subject`` loses its "[PATCH n/m]" tags."""
    text = header.decode("utf-8", "replace")
    fields: list[list[str]] = []  # [key, value] pairs, mutable while continuations arrive
    body: list[str] = []
    current: list[str] | None = None
    in_fields = False  # inside a paragraph that started with a field
    paragraph_start = True
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if _STOP.match(line):
            break
        if not line.strip():
            paragraph_start = True
            current = None
            in_fields = False
            if body and body[-1] != "":
                body.append("")
            continue
        if line.startswith("From ") and not fields and not body:
            continue  # the mbox "From <sha> <date>" separator of a format-patch mail
        m = _FIELD.fullmatch(line)
        if line[:1] in (" ", "\t") and current is not None:
            cont = line.strip()
            if current[0] in _MAIL_FIELDS:
                current[1] += " " + cont  # RFC 2822 folding: one logical line
            else:
                current[1] += "\n" + ("" if cont == "." else cont)  # DEP-3 long description
        elif m and (paragraph_start or in_fields):
            current = [m.group(1).lower(), (m.group(2) or "").strip()]
            fields.append(current)
            in_fields = True
        else:
            current = None
            in_fields = False
            body.append(line)
        paragraph_start = False
    if not fields:
        return None
    out: list[tuple[str, str]] = []
    for key, value in fields:
        value = _decode_mime(value.strip("\n"))
        if key == "subject":
            value = _SUBJECT_TAG.sub("", value, count=1)
        out.append((key, value))
    return Dep3(text=text, fields=tuple(out), body="\n".join(body).strip("\n"))
