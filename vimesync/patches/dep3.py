"""DEP-3 patch headers (https://dep-team.pages.debian.net/deps/dep3/), parsed leniently.

Also reads ``git format-patch`` mail headers (From:, Subject: [PATCH] ...) and the commit
message after them. Input is untrusted free text: never raise, decode with replacement, and
bound the work: fields are read from the first ``MAX_HEADER_BYTES`` (256 KiB) of a patch's
free-text header only (the rest is ignored), each line is copied once however many
continuation lines a field has, and MIME encoded-words are decoded only in a field value of at
most ``MAX_MIME_CHARS`` characters (the standard library's decoder is quadratic in the length
of a line; a longer value keeps its raw text).
"""

from __future__ import annotations

import re

from vimesync.patches.model import Dep3

MAX_HEADER_BYTES = 256 << 10
MAX_MIME_CHARS = 4096

_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*)|$)")
# Mail header fields are folded, not multi-line: their continuation lines join with a space.
_MAIL_FIELDS = frozenset({"subject", "from", "date", "to", "cc"})
_SUBJECT_TAG = re.compile(r"^\s*(\[[^\]]*\]\s*)+")
# Lines that end a header: the format-patch/quilt separator, or the start of a diff.
_STOP = re.compile(r"^(---\s*$|diff |--- |\+\+\+ |@@ |Index: |={10,}\s*$)")


def _decode_mime(value: str) -> str:
    """Decode "=?UTF-8?q?Caf=C3=A9?=" -> "Café" in mail headers; other values unchanged."""
    if "=?" not in value or len(value) > MAX_MIME_CHARS:
        return value
    from email.header import decode_header, make_header  # only for the rare encoded word

    try:
        return str(make_header(decode_header(value)))
    except Exception:  # malformed encoded-words: keep the raw text
        return value


def parse_dep3(header: bytes, *, max_bytes: int = MAX_HEADER_BYTES) -> Dep3 | None:
    """Parse a patch's free-text header; None when it holds no ``Field: value`` line.

    Fields are read in every paragraph (keys lower-cased, order kept); lines indented with
    a space or tab continue the previous field: as new lines of a DEP-3 long description
    (" ." stands for an empty line), or unfolded with a space for mail fields; a paragraph
    that does not start with a field is free-form text and goes to ``body``. Reading stops at
    a "---" line or the first diff line, and after ``max_bytes`` of the header (``text`` keeps it
    all). ``Subject`` loses its "[PATCH n/m]" tags."""
    text = header.decode("utf-8", "replace")
    # [key, first line, continuation lines]: joined once at the end, never grown line by line
    fields: list[tuple[str, str, list[str]]] = []
    body: list[str] = []
    current: tuple[str, str, list[str]] | None = None
    in_fields = False  # inside a paragraph that started with a field
    paragraph_start = True
    for raw in header[:max_bytes].decode("utf-8", "replace").splitlines():
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
            current[2].append("" if cont == "." and current[0] not in _MAIL_FIELDS else cont)
        elif m and (paragraph_start or in_fields):
            current = (m.group(1).lower(), (m.group(2) or "").strip(), [])
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
    for key, first, more in fields:
        # RFC 2822 folding makes a mail field one logical line; a DEP-3 long description keeps
        # its lines (" ." stands for an empty one).
        value = (" " if key in _MAIL_FIELDS else "\n").join([first, *more])
        value = _decode_mime(value.strip("\n"))
        if key == "subject":
            value = _SUBJECT_TAG.sub("", value, count=1)
        out.append((key, value))
    return Dep3(text=text, fields=tuple(out), body="\n".join(body).strip("\n"))
