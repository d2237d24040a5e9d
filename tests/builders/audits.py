"""The audit run in code, as the tests call it: positionally (downstream, baseline, head, upstream,
tip) and the rest by keyword, into one :class:`~vimesync.audit.run.AuditInputs`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vimesync.audit import run
from vimesync.audit.model import AuditResult


def run_audit(downstream: Path, baseline: str, head: str, upstream: Path, tip: str, **kw: Any) -> AuditResult:
    return run.run_audit(run.AuditInputs(downstream, baseline, head, upstream, tip, **kw))
