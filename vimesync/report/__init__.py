"""The sync report: a model assembled from the walk, the patch check and the audit, rendered as
markdown or JSON, and published into a PR description between markers.

Typical use (``vimesync report``, ``sop status``, ``sync`` and ``demo`` make it from the steps,
:mod:`vimesync.app.report`)::

    from vimesync.report import ReportParts, build_report, render_markdown, render_json
    report = build_report(ReportParts(walk=walk_result, check=check_report, audit=audit_result,
                                      upstream_name="Slime", upstream_repo="THUDM/slime"))
    text = render_markdown(report)      # str, stable
    doc = render_json(report)           # dict, the same facts
"""

from __future__ import annotations

from vimesync.report.build import ReportParts, build_report
from vimesync.report.document import render_json
from vimesync.report.markdown import render_markdown
from vimesync.report.model import SyncReport

__all__ = ["ReportParts", "SyncReport", "build_report", "render_json", "render_markdown"]
