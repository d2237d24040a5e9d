"""How ``vimesync audit`` shows its result: one line a changed path that needs a look, the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.text import plural

if TYPE_CHECKING:
    from vimesync.app.audit import AuditOutcome, ReviewResult
    from vimesync.audit.model import AuditResult


def render_audit(outcome: AuditOutcome) -> None:
    render(outcome.audit)


def render_review(result: ReviewResult) -> None:
    n = plural(len(result.reviews), "review")
    output.stdout.print(output.styled(f"recorded {n} by {result.by} in {result.ledger}"))


def render(result: AuditResult) -> None:
    from vimesync.audit.model import CLASSES, OVERLAY, STALE

    counts = result.counts()
    per_class = ", ".join(f"{counts[c]:,} {c}" for c in CLASSES if counts[c]) or "nothing changed"
    output.out(
        f"{plural(len(result.paths), 'changed path')} {result.baseline[:8]}..{result.head[:8]} "
        f"against upstream {result.upstream_tip[:8]}: {per_class}"
    )
    # Paths, names and the sync come from the repository: shown as text, one line each.
    output.stdout.print(output.styled(f"ledger: {result.ledger_path} (sync {result.sync})"))
    for p in result.paths:
        if p.ok and p.cls != OVERLAY:
            continue
        extra = f" (+{p.residue_added}/-{p.residue_removed} lines of residue)" if p.cls == OVERLAY else ""
        if p.review == STALE:
            extra += f" (reviewed by {p.reviewed_by} at {(p.reviewed_oid or '')[:8]}, changed since)"
        elif p.reviewed_in:
            extra += f" (reviewed by {p.reviewed_by} in sync {p.reviewed_in}, residue unchanged)"
        output.stdout.print(output.styled(f"  {p.review:<10} {p.cls:<19} {p.path}{extra}"))
        for line in p.dropped_comments:
            output.stdout.print(output.styled(f"    dropped upstream comment {line}"))
    for v in result.violations:
        what = f"no match of {v.pattern}" if v.must == "match" else f"{v.text}  ({v.pattern} must not match)"
        output.stdout.print(output.styled(f"  violation  {v.path}:{v.line}: {what} [{v.where}]"))
    if not result.paths:
        output.warn(
            f"no path changed between the baseline and the head ({result.baseline[:12]}): nothing was "
            "audited; is --baseline the commit before the sync?"
        )
    elif result.ok:
        output.out(
            "OK: every changed path is identical to upstream, explained by the translations, or reviewed."
        )
    else:
        n = len(result.unreviewed) + len(result.stale)
        need = "needs" if n == 1 else "need"
        if n:
            output.out(f"FAILED: {plural(n, 'path')} {need} review: vimesync audit review PATH... --by NAME")
        if result.violations:
            output.out(
                f"FAILED: {plural(len(result.violations), 'verification finding')} ([[upstream.verify]])"
            )
