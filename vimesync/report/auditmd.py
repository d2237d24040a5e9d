"""The report's Final audit section: the changed paths by class, the translations that clear the
translated-verified ones, each overlay and its residue, the upstream comments overlays dropped,
and the verification rules broken at the head."""

from __future__ import annotations

from vimesync.audit.model import (
    CLASSES,
    OVERLAY,
    REVIEWED,
    STALE,
    TRANSLATED_VERIFIED,
    VERIFIED,
    AuditResult,
    PathAudit,
)
from vimesync.audit.owncommits import OwnChanges
from vimesync.report.mdtext import _capped, code, escape
from vimesync.report.model import Skipped
from vimesync.text import agree, plural


def _audit_line(p: PathAudit) -> str:
    line = f"- {code(p.path)} ({p.cls}"
    if p.cls == OVERLAY:
        line += f", {_size(p)}"
    if p.resolved_in:  # a conflict of the carry resolved by hand (the Summary shows what it dropped)
        line += (
            " in " + ", ".join(code(n) for n in p.resolved_in[:5]) + (" …" if len(p.resolved_in) > 5 else "")
        )
    line += f"): {p.review}"
    if p.review == STALE:
        what = "its residue" if p.cls == OVERLAY else "it"
        where = f" in sync {escape(p.reviewed_in)}" if p.reviewed_in else ""
        line += (
            f", reviewed by {escape(p.reviewed_by or '?')} at {escape((p.reviewed_oid or '?')[:8])}"
            f"{where}, {what} changed since"
        )
    return line


def _size(p: PathAudit) -> str:
    if p.residue is None or (p.residue_added == 0 and p.residue_removed == 0):
        return "not a text diff"
    return f"+{p.residue_added:,}/-{p.residue_removed:,} lines of residue"


def _rule_name(rule: str) -> str:
    """A translation without its match count (``... (3 matches)``), to count the paths it clears."""
    return rule.rsplit(" (", 1)[0] if rule.endswith(")") else rule


def translation_lines(a: AuditResult) -> list[str]:
    """Each translation that explains translated-verified paths, with how many it clears."""
    cleared: dict[str, int] = {}
    for p in a.paths:
        if p.cls == TRANSLATED_VERIFIED:
            for rule in p.rules:
                cleared[_rule_name(rule)] = cleared.get(_rule_name(rule), 0) + 1
    return [f"- {code(rule)}: {plural(n, 'path')}" for rule, n in cleared.items()]


def overlay_lines(a: AuditResult) -> list[str]:
    out = []
    for p in a.overlays:
        line = f"- {code(p.path)}: {_size(p)}, {p.review}"
        if p.reviewed_by and p.review != STALE:
            line += f" by {escape(p.reviewed_by)}"
            if p.reviewed_in:
                line += f" (sync {escape(p.reviewed_in)}, residue unchanged)"
        out.append(line)
    return out


def dropped_lines(a: AuditResult) -> list[str]:
    return [f"- {code(p.path)} line {code(d)}" for p in a.overlays for d in p.dropped_comments]


def violation_lines(a: AuditResult) -> list[str]:
    out = []
    for v in a.violations:
        if v.must == "match":
            out.append(f"- {code(v.path)}: no match of {code(v.pattern)} ({escape(v.where)})")
        else:
            where = code(f"{v.path}:{v.line}")
            out.append(f"- {where}: {code(v.text)} matches {code(v.pattern)} ({escape(v.where)})")
    return out


def _proof(a: AuditResult) -> str:
    """How the paths were cleared: ``9 verified against upstream, 6 reviewed`` (the nonzero ones).
    Verified paths (same blob, explained by a translation, deleted upstream too) had no review:
    they are not counted as reviewed."""
    verified = sum(1 for p in a.paths if p.review == VERIFIED)
    reviewed = sum(1 for p in a.paths if p.review == REVIEWED)
    parts = [
        f"{verified:,} verified against upstream" if verified else "",
        f"{reviewed:,} reviewed" if reviewed else "",
    ]
    return ", ".join(filter(None, parts))


def render_audit(a: AuditResult | Skipped, upstream_name: str, downstream_name: str = "") -> list[str]:
    """The Final audit section; ``downstream_name`` ([downstream] name, "Vime") names the fork."""
    out = ["## Final audit", ""]
    if isinstance(a, Skipped):
        return [*out, escape(a.reason)]
    n = len(a.paths)
    baseline = f"pre-sync {escape(downstream_name)} baseline" if downstream_name else "pre-sync baseline"
    if n == 0:
        out.append(f"No paths changed between the {baseline} {a.baseline[:8]} and the head {a.head[:8]}.")
        return out + _details(a, downstream_name)
    counts = a.counts()
    per_class = ", ".join(f"{counts[c]:,} {c}" for c in CLASSES if counts[c])
    against = f"against the {escape(upstream_name)} tip and the {baseline}"
    bad = [p for p in a.paths if not p.ok]
    if not bad:
        out.append(f"{plural(n, 'changed path')} {against}: {_proof(a)} ({per_class}).")
        out += [
            "",
            "Identical paths (and deletions upstream made too) are verified by blob id, translated-verified "
            "ones by the translations that explain them; reviews of the rest are recorded in "
            f"{code(a.ledger_path)}.",
        ]
    else:
        cleared = _proof(a)
        audited = f"Audited {plural(n, 'changed path')} {against} ({per_class})"
        audited += f": {cleared}" if cleared else ""
        out.append(f"{audited}; {len(bad):,} still {agree(len(bad), 'needs', 'need')} review:")
        out += ["", *_capped([_audit_line(p) for p in bad], "path")]
    return out + _details(a, downstream_name)


def _details(a: AuditResult, downstream_name: str) -> list[str]:
    out: list[str] = []
    rules = translation_lines(a)
    if rules:
        out += ["", "Translations that explain the translated-verified paths:", "", *rules]
    overlays = overlay_lines(a)
    if overlays:
        out += [
            "",
            f"Existing {escape(downstream_name or 'downstream')}-native overlays are retained separately "
            "from translations "
            f"({plural(len(overlays), 'overlay')}; a review covers the residue over the translated "
            "upstream):",
            "",
            *_capped(overlays, "overlay"),
        ]
    dropped = dropped_lines(a)
    if dropped:
        out += [
            "",
            "Upstream comments the overlays dropped (restore omitted upstream comments):",
            "",
            *_capped(dropped, "line"),
        ]
    broken = violation_lines(a)
    if broken:
        out += [
            "",
            f"Verification rules broken at the head ({plural(len(broken), 'finding')}):",
            "",
            *_capped(broken, "finding"),
        ]
    return out


def _signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"{n:,}"


def render_own(own: OwnChanges | Skipped) -> list[str]:
    """Downstream changes in this sync: the maintainer's own commits and their net line count."""
    out = ["## Downstream changes in this sync", ""]
    if isinstance(own, Skipped):
        return [*out, escape(own.reason)]
    left = [plural(own.carried, "carried commit"), plural(own.pin_bumps, "pin bump")]
    if own.bookkeeping:
        left.append(f"{plural(own.bookkeeping, 'bookkeeping commit')} under sop/")
    besides = f"{', '.join(left[:-1])} and {left[-1]} not listed"
    if not own.commits:
        return [*out, f"None: every commit of the sync branch is carry's ({besides})."]
    out.append(
        f"{plural(len(own.commits), 'commit')} of the sync branch that carry did not make ({besides}): "
        f"+{own.added:,}/-{own.removed:,}, net {_signed(own.net)} {'line' if abs(own.net) == 1 else 'lines'}."
    )
    out.append("")
    lines = []
    for c in own.commits:
        extra = f", {plural(c.binary, 'binary file')}" if c.binary else ""
        lines.append(
            f"- {c.sha[:8]} {escape(c.subject)} ({escape(c.author)}, +{c.added:,}/-{c.removed:,}{extra})"
        )
    return out + _capped(lines, "commit")
