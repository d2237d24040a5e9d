"""Lint findings and the codes they carry (one table, documented in docs/lint.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# code -> one-line summary. S: series, P: patch structure, H: header (DEP-3), W: whitespace and
# line endings, I: index lines, O: applying to the source (--strict).
CODES: dict[str, str] = {
    "S001": "series entry names a file that does not exist",
    "S002": "patch file in the series folder that the series does not list (orphan)",
    "S003": "series lists the same patch twice",
    "S004": "series entry refused: absolute, leaves the series folder, a symlink or not a regular file",
    "S005": "series line with an option other than -pN",
    "P001": "patch does not parse (or is refused as unsafe)",
    "H001": "no DEP-3 header: the report's Purpose / PR cell stays empty",
    "H002": "header without Description or Subject",
    "H003": "Origin is not 'upstream|backport|vendor|other[, URL or commit]' or a URL",
    "H004": "Bug field is not a URL or owner/repo#N reference",
    "H005": "Forwarded is not yes, no, not-needed or a reference",
    "H006": "Applied-Upstream is not a version, URL or commit:<sha>",
    "H007": "reference field the report cannot turn into a link",
    "H008": "control character or invalid UTF-8 in the header",
    "W001": "diff structure lines (diff/---/+++/@@) end in CRLF: converted by an editor or checkout",
    "W002": "added lines end differently (CRLF/LF) than the context and removed lines of their hunk",
    "W003": "added line with trailing whitespace (git apply --whitespace=warn flags it)",
    "W004": "patch file does not end with a newline",
    "W005": "an added blank line at the end of a file (git apply: new blank line at EOF)",
    "I001": "file section without an index line: drift against the pin cannot be checked",
    "O001": "hunk applies only at an offset: refresh the patch (--strict)",
    "O002": "patch does not apply to the source (--strict)",
}


@dataclass(frozen=True)
class Finding:
    path: str  # the series or patch file, as shown
    line: int  # 1-based; the series line or the patch line
    code: str
    message: str

    def __post_init__(self) -> None:
        assert self.code in CODES, self.code

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class LintResult:
    series: str
    patches: int  # patches read
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "series": self.series,
            "patches": self.patches,
            "findings": [f.as_dict() for f in self.findings],
        }
