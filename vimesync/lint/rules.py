"""Lint rules for one patch: its DEP-3 header (present, fields well formed, references the report
can link), line endings and whitespace, ``index`` lines. Pure: bytes and the parsed patch in,
findings out. Every value shown in a message goes through ``safefs.excerpt``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from vimesync.lint.model import Finding
from vimesync.patches.dep3 import MAX_HEADER_BYTES
from vimesync.patches.model import PatchFile
from vimesync.report.links import find_refs
from vimesync.safefs import excerpt
from vimesync.text import plural

MAX_WHITESPACE_FINDINGS = 20  # W002 and W003 per patch, then one line counting the rest

_FIELD = re.compile(rb"^([A-Za-z][A-Za-z0-9_-]*):")
_CATEGORY = re.compile(r"^(upstream|backport|vendor|other)\s*(?:,\s*(.*))?$", re.IGNORECASE | re.DOTALL)
_COMMIT = re.compile(r"^commit:?\s*[0-9a-fA-F]{7,40}\b")
_VERSION = re.compile(r"^v?[0-9][A-Za-z0-9.+~_-]*(?:\s*,\s*(.*))?$", re.DOTALL)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STRUCTURE = (b"diff --git ", b"--- ", b"+++ ", b"@@ ")


def _field_lines(header: bytes) -> dict[str, int]:
    """The 1-based line of each field's first occurrence in the header."""
    lines: dict[str, int] = {}
    for n, line in enumerate(header[:MAX_HEADER_BYTES].split(b"\n"), 1):
        m = _FIELD.match(line)
        if m:
            lines.setdefault(m.group(1).decode("ascii").lower(), n)
    return lines


def _linked(value: str, repo: str | None) -> bool:
    return any(r.url for r in find_refs(value, default_repo=repo))


def header_findings(path: str, patch: PatchFile, *, repo: str | None = None) -> Iterator[Finding]:
    """H001-H008: the DEP-3 header."""
    header = patch.header[:MAX_HEADER_BYTES]
    yield from _encoding(path, header)
    dep3 = patch.dep3
    if dep3 is None:
        yield Finding(
            path,
            1,
            "H001",
            "no DEP-3 header (Description, Origin, ...): the report's Purpose / PR cell is empty; "
            "add one with `vimesync patches describe`",
        )
        return
    lines = _field_lines(header)
    if not (dep3.get("description") or dep3.get("subject") or "").strip():
        yield Finding(
            path, 1, "H002", "the header has no Description or Subject: the report shows no purpose"
        )
    for value in dep3.get_all("origin"):
        yield from _origin(path, lines.get("origin", 1), value, repo)
    for key, value in dep3.fields:
        if (key == "bug" or key.startswith("bug-")) and not _linked(value, repo):
            yield Finding(path, lines.get(key, 1), "H004", f"{key.title()} {excerpt(value)} is not a URL")
    for value in dep3.get_all("forwarded"):
        yield from _forwarded(path, lines.get("forwarded", 1), value, repo)
    for value in dep3.get_all("applied-upstream"):
        yield from _applied_upstream(path, lines.get("applied-upstream", 1), value, repo)


def _encoding(path: str, header: bytes) -> Iterator[Finding]:
    """H008: the header's first control character or invalid UTF-8, if any."""
    bad = _CONTROL.search(header)
    try:
        header.decode("utf-8")
        undecodable = None
    except UnicodeDecodeError as exc:
        undecodable = exc.start
    if bad is not None or undecodable is not None:
        at = min(x for x in (bad.start() if bad else None, undecodable) if x is not None)
        what = f"control character {header[at : at + 1]!r}" if bad and bad.start() == at else "invalid UTF-8"
        yield Finding(path, header.count(b"\n", 0, at) + 1, "H008", f"{what} in the header")


def _forwarded(path: str, line: int, value: str, repo: str | None) -> Iterator[Finding]:
    """H005, H007: a Forwarded field is yes, no, not-needed or a reference the report can link."""
    word = value.strip().lower()
    if word in ("no", "not-needed", "yes"):
        return
    if not find_refs(value, default_repo=repo):
        yield Finding(
            path, line, "H005", f"Forwarded {excerpt(value)}: expected yes, no, not-needed or a URL"
        )
    elif not _linked(value, repo):
        yield Finding(path, line, "H007", _unlinked("Forwarded", value))


def _applied_upstream(path: str, line: int, value: str, repo: str | None) -> Iterator[Finding]:
    """H006, H007: an Applied-Upstream field is a version, or a reference the report can link."""
    text = value.strip()
    if _linked(text, repo):
        return
    if _COMMIT.match(text) or find_refs(text, default_repo=repo):
        yield Finding(path, line, "H007", _unlinked("Applied-Upstream", value))
    elif not _VERSION.match(text):
        yield Finding(
            path,
            line,
            "H006",
            f"Applied-Upstream {excerpt(value)}: expected a version, URL or commit:<sha>",
        )


def _unlinked(field: str, value: str) -> str:
    return (
        f"{field} {excerpt(value)} names no link the report can show "
        "(write a URL or owner/repo#N, or set the engine pin's repo for commit:<sha>)"
    )


def _origin(path: str, line: int, value: str, repo: str | None) -> Iterator[Finding]:
    text = value.strip()
    m = _CATEGORY.match(text)
    rest = (m.group(2) or "").strip() if m else text
    if m and not rest:
        if m.group(1).lower() in ("upstream", "backport"):
            yield Finding(path, line, "H007", f"Origin {excerpt(value)} names no commit or URL to link")
        return
    if _linked(rest, repo):
        return
    if _COMMIT.match(rest) or find_refs(rest, default_repo=repo):
        yield Finding(path, line, "H007", _unlinked("Origin", value))
        return
    yield Finding(
        path,
        line,
        "H003",
        f"Origin {excerpt(value)}: expected 'upstream|backport|vendor|other, <URL or commit:sha>' or a URL",
    )


def whitespace_findings(path: str, data: bytes, patch: PatchFile) -> Iterator[Finding]:
    """W001-W005: line endings and whitespace."""
    crlf_structure = [
        n
        for n, line in enumerate(data.split(b"\n"), 1)
        if line.endswith(b"\r") and line.startswith(_STRUCTURE)
    ]
    if crlf_structure:
        more = f" (and {len(crlf_structure) - 1} more)" if len(crlf_structure) > 1 else ""
        yield Finding(path, crlf_structure[0], "W001", f"a diff line ends in CRLF{more}")
    trailing = 0
    mixed = 0  # W002, one per hunk
    for fp in patch.files:
        for hunk in fp.hunks:
            old = [b for tag, b in hunk.lines if tag in " -" and b.endswith(b"\n")]
            crlf_old = sum(1 for b in old if b.endswith(b"\r\n"))
            for i, (tag, body) in enumerate(hunk.lines):
                if tag != "+":
                    continue
                line = hunk.patch_line + i + 1
                ending = body.endswith(b"\r\n")
                if (
                    old
                    and body.endswith(b"\n")
                    and (crlf_old == len(old) and not ending or crlf_old == 0 and ending)
                ):
                    file_style = "CRLF" if crlf_old else "LF"
                    mixed += 1
                    if mixed > MAX_WHITESPACE_FINDINGS:
                        break
                    yield Finding(
                        path,
                        line,
                        "W002",
                        f"{excerpt(fp.path)}: added line ends in {'CRLF' if ending else 'LF'}, "
                        f"the hunk's other lines in {file_style}",
                    )
                    break
            for i, (tag, body) in enumerate(hunk.lines):
                stripped = body.rstrip(b"\r\n")
                if tag == "+" and stripped != stripped.rstrip(b" \t"):
                    trailing += 1
                    if trailing <= MAX_WHITESPACE_FINDINGS:
                        yield Finding(
                            path, hunk.patch_line + i + 1, "W003", "trailing whitespace in an added line"
                        )
    if mixed > MAX_WHITESPACE_FINDINGS:
        yield Finding(
            path,
            1,
            "W002",
            f"and {plural(mixed - MAX_WHITESPACE_FINDINGS, 'more hunk')} with mixed line endings",
        )
    if trailing > MAX_WHITESPACE_FINDINGS:
        yield Finding(
            path,
            1,
            "W003",
            f"and {plural(trailing - MAX_WHITESPACE_FINDINGS, 'more added line')} with trailing whitespace",
        )
    if data and not data.endswith(b"\n"):
        yield Finding(path, data.count(b"\n") + 1, "W004", "the patch file does not end with a newline")
    yield from _blank_at_eof(path, patch)


def _blank_at_eof(path: str, patch: PatchFile) -> Iterator[Finding]:
    """W005: a hunk that ends the file with an added blank line (``git apply`` warns "new blank
    line at EOF"): a hunk ends at the file's end when no context follows its last change."""
    shown = 0
    for fp in patch.files:
        for hunk in fp.hunks:
            lines = list(hunk.lines)
            if not lines or lines[-1][0] != "+" or lines[-1][1].strip() != b"":
                continue
            shown += 1
            if shown <= MAX_WHITESPACE_FINDINGS:
                line = hunk.patch_line + len(lines)
                yield Finding(path, line, "W005", f"{excerpt(fp.path)}: new blank line at EOF")


def index_findings(path: str, patch: PatchFile) -> Iterator[Finding]:
    """I001: text file sections with hunks and no ``index <old>..<new>`` line, once per patch
    (a patch made with plain ``diff -u`` lacks them in every section: one finding, not 70)."""
    bare = [fp for fp in patch.files if fp.hunks and fp.old_oid is None]
    if not bare:
        return
    first = bare[0]
    others = f" and {len(bare) - 1} more file{'s' if len(bare) > 2 else ''}" if len(bare) > 1 else ""
    yield Finding(
        path,
        first.patch_line,
        "I001",
        f"{excerpt(first.path)}{others}: no index line: a drift of the pinned file cannot be detected "
        "(make patches with git diff / git format-patch)",
    )
