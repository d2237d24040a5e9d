"""What every use case returns, and the one JSON contract of every ``--json`` document.

Every document starts with ``kind`` (which command's document it is), ``ok`` and ``exit_code``
(``ok`` is exactly ``exit_code == 0``); the rest is the command's own body.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from vimesync.errors import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK


class Kind(str, Enum):
    """Which command a document (or a result) belongs to: a closed set."""

    WALK = "walk"
    CARRY = "carry"
    CARRY_STATUS = "carry-status"
    CHECK = "patches-check"
    LINT = "patches-lint"
    DESCRIBE = "patches-describe"
    REFRESH = "patches-refresh"
    BUMP = "pin-bump"
    SCAN = "pin-scan"
    RADAR = "pin-radar"
    AUDIT = "audit"
    REVIEW = "audit-review"
    REPORT = "report"
    DEMO = "demo"
    CI = "ci"
    STATUS = "sop-status"
    RECORD_IMAGE = "sop-record-image"
    RECORD_TESTS = "sop-record-tests"
    RECORD_RUN = "sop-record-run"
    RECORD_CI = "sop-record-ci"
    RECORD_PRECOMMIT = "sop-record-precommit"
    REGRESS = "sop-regress"
    PROMOTE = "sop-promote"
    INIT = "init"
    SYNC = "sync"
    BOT = "bot"
    ERROR = "error"


CONTRACT_KEYS = ("kind", "ok", "exit_code")


def exit_code_of(ok: bool) -> int:
    return EXIT_OK if ok else EXIT_CHECK_FAILED


def document(kind: Kind, exit_code: int, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` under the contract's keys: ``{"kind", "ok", "exit_code", **body}``.

    A body may not carry the contract's keys with other values (a use case that says ``ok`` one
    way and exits another would be two answers)."""
    for key in CONTRACT_KEYS:
        body.pop(key, None)
    return {"kind": kind.value, "ok": exit_code == EXIT_OK, "exit_code": exit_code, **body}


def error_document(message: str, exit_code: int = EXIT_BAD_INPUT) -> dict[str, Any]:
    return document(Kind.ERROR, exit_code, {"error": message})


@dataclass(frozen=True)
class Outcome:
    """A use case's answer when it has no richer result type: the document and the exit code."""

    kind: Kind
    exit_code: int
    body: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return document(self.kind, self.exit_code, dict(self.body))
