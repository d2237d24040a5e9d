"""``vimesync patches describe``: add or update a patch's DEP-3 header in place.

Only the header (the text before the first file section, which ``git apply`` ignores) changes:
``Description`` is set (its continuation lines replaced), ``Origin`` too when references are
given; every other byte of the patch is kept. The result is parsed again and must hold exactly
the same file sections from the same bytes, or nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vimesync.errors import BadInput, PatchError
from vimesync.patches.diffparse import parse_patch
from vimesync.report.links import find_refs
from vimesync.safefs import excerpt

MAX_DESCRIPTION = 4096  # characters
MAX_REF = 2048
MAX_REFS = 20
_FIELD = re.compile(rb"^([A-Za-z][A-Za-z0-9_-]*):")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_MAIL = re.compile(rb"^(From [0-9a-f]{7,}|From:|Subject:|Date:)")


ORIGIN_KINDS = ("upstream", "backport", "vendor", "other")  # DEP-3's Origin categories
FORWARDED_WORDS = ("no", "not-needed")  # DEP-3's Forwarded values that are no reference


def normalize_ref(ref: str, *, repo: str | None = None, flag: str = "--origin") -> str:
    """``owner/repo#N`` -> its pull URL; a GitHub or other http(s) URL, or ``commit:<sha>``, as it
    is. BadInput for anything else (it would not become a link in the report)."""
    if not ref or len(ref) > MAX_REF or _CONTROL.search(ref) or any(c.isspace() for c in ref):
        raise BadInput(f"{flag} {excerpt(ref)}: expected one URL, owner/repo#N or commit:<sha>")
    refs = find_refs(ref, default_repo=repo)
    whole = (
        len(refs) == 1 and refs[0].url and (ref.startswith(("http://", "https://", "commit:")) or "#" in ref)
    )
    if not whole:
        raise BadInput(
            f"{flag} {excerpt(ref)}: expected one URL, owner/repo#N or commit:<sha> "
            "(commit:<sha> needs the engine pin's repo)"
        )
    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)#([0-9]+)", ref)
    return f"https://github.com/{m[1]}/pull/{int(m[2])}" if m else ref


def _description_lines(text: str) -> list[str]:
    if not text.strip():
        raise BadInput("--description: empty")
    if len(text) > MAX_DESCRIPTION:
        raise BadInput(f"--description: more than {MAX_DESCRIPTION} characters")
    if _CONTROL.search(text.replace("\t", " ").replace("\r\n", "\n")):
        raise BadInput("--description: control characters (only text and newlines)")
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").strip().split("\n")]
    # DEP-3 long description: continuation lines indented by one space, " ." for an empty line.
    # Indented, none of them can be read as the start of a diff.
    return [f"Description: {lines[0].strip()}"] + [
        f" {ln.strip()}" if ln.strip() else " ." for ln in lines[1:]
    ]


def _groups(paragraph: list[bytes]) -> list[tuple[str, list[bytes]]]:
    """The fields of a DEP-3 paragraph: (lower-cased key, its line and continuation lines)."""
    groups: list[tuple[str, list[bytes]]] = []
    for line in paragraph:
        m = _FIELD.match(line)
        if line[:1] in (b" ", b"\t") and groups:
            groups[-1][1].append(line)
        elif m:
            groups.append((m.group(1).decode("ascii").lower(), [line]))
        else:
            groups.append(("", [line]))
    return groups


_ORDER = ("description", "origin", "bug", "forwarded", "applied-upstream")  # DEP-3's own order


@dataclass(frozen=True)
class HeaderFields:
    """The DEP-3 fields ``patches describe`` sets: the Description always; Origin
    (``origin_kind, refs``), Bug, Forwarded and Applied-Upstream when given (references already
    normalised)."""

    description: str
    refs: tuple[str, ...] = ()
    origin_kind: str = "upstream"
    bug: tuple[str, ...] = ()
    forwarded: str | None = None
    applied_upstream: str | None = None

    def check(self) -> None:
        """BadInput for more references than a header holds or an Origin kind DEP-3 does not know."""
        if len(self.refs) > MAX_REFS or len(self.bug) > MAX_REFS:
            raise BadInput(f"more than {MAX_REFS} --origin or --bug references")
        if self.origin_kind not in ORIGIN_KINDS:
            kinds = ", ".join(ORIGIN_KINDS)
            raise BadInput(f"--origin-kind {excerpt(self.origin_kind)}: expected one of {kinds}")

    def lines(self, cr: bytes) -> dict[str, list[bytes]]:
        """Each field's new lines by lower-cased key, each ending with ``cr`` (the ``\\r`` of a
        CRLF patch, else nothing) before the newline they are joined with."""
        fields = {"description": [ln.encode("utf-8") + cr for ln in _description_lines(self.description)]}
        if self.refs:
            origin = f"Origin: {self.origin_kind}, ".encode() + ", ".join(self.refs).encode("utf-8")
            fields["origin"] = [origin + cr]
        if self.bug:
            fields["bug"] = [b"Bug: " + ", ".join(self.bug).encode("utf-8") + cr]
        if self.forwarded is not None:
            fields["forwarded"] = [b"Forwarded: " + self.forwarded.encode("utf-8") + cr]
        if self.applied_upstream is not None:
            fields["applied-upstream"] = [b"Applied-Upstream: " + self.applied_upstream.encode("utf-8") + cr]
        return fields


def describe(data: bytes, *, name: str, strip: int, fields: HeaderFields) -> bytes:
    """``data`` with its DEP-3 header's fields set to ``fields``, every other byte kept."""
    fields.check()
    before = parse_patch(data, name=name, strip=strip)
    header, body = data[: len(before.header)], data[len(before.header) :]
    if not before.files:
        raise PatchError(name, "no file section: nothing to describe")
    first_diff = body.split(b"\n", 1)[0]
    eol = b"\r\n" if first_diff.endswith(b"\r") else b"\n"
    lines = header.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if lines and _MAIL.match(lines[0]):
        raise PatchError(
            name,
            "a git format-patch mail: its Subject and message are the description; "
            "edit the commit and format it again instead",
        )
    # New lines end like the patch's diff lines; existing lines keep their own endings.
    cr = eol[:-1]
    new = b"\n".join(_merged(lines, fields.lines(cr), cr)) + b"\n" + body
    after = parse_patch(new, name=name, strip=strip)
    # The diff must start where the new header ends and be the same bytes, read as the same files.
    if new[len(after.header) :] != body or len(after.files) != len(before.files) or after.dep3 is None:
        raise PatchError(name, "updating the header would change the diff: nothing written")
    return new


def _merged(lines: list[bytes], new_fields: dict[str, list[bytes]], cr: bytes) -> list[bytes]:
    """The header's lines with ``new_fields`` in: each replaces the field of its key where the
    first paragraph has it, the others go first in DEP-3's order; a header that starts with no
    field (free text) gets a new paragraph of fields before it."""
    para_end = next((i for i, ln in enumerate(lines) if not ln.strip()), len(lines))
    has_fields = bool(lines) and _FIELD.match(lines[0]) is not None
    if not has_fields:
        ordered = [ln for k in _ORDER if k in new_fields for ln in new_fields[k]]
        return [*ordered, *([cr, *lines] if lines else [cr])]
    out: list[bytes] = []
    done = set()
    for key, group in _groups(lines[:para_end]):
        if key in new_fields:
            if key not in done:
                out += new_fields[key]
                done.add(key)
            continue
        out += group
    missing = [k for k in _ORDER if k in new_fields and k not in done]
    return [ln for k in missing for ln in new_fields[k]] + out + lines[para_end:]
