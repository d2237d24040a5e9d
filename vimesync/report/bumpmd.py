"""``pin bump --format markdown``: a pull-request body in the Renovate style. What moves (engine,
from, to), a verdict table (each patch at the old pin, at the new one, its offsets), the patches
refreshed, dropped or needing a hand, and the engine's changelog between the two pins restricted to
the commits that touch patched files (from a git source).

Pure: a report in, Markdown out. Patch names, verdicts, source names and commit subjects come from
the series, the sources and upstream: every one is escaped (report.mdtext) and the whole body has
its mentions neutralised, so it pings nobody and closes nothing when the PR merges.
"""

from __future__ import annotations

from vimesync.check.bump import BumpReport, PatchBump, label, named_apart, verdict
from vimesync.report.backports import Backports
from vimesync.report.backportsmd import commits_table, left_off_line
from vimesync.report.matrix import STATUS_MARK
from vimesync.report.mdtext import DASH, cell, code
from vimesync.report.mentions import finish_markdown
from vimesync.text import agree, of_total, plural


def _side(p: PatchBump, new: bool) -> str:
    r = p.new if new else p.old
    return f"{STATUS_MARK[r.status]} {cell(verdict(r))}"


def _offsets(p: PatchBump) -> str:
    if not p.new.offsets:
        return DASH
    return cell(", ".join(f"{o.file} #{o.hunk} {o.offset:+d}" for o in p.new.offsets[:5])) + (
        f" and {len(p.new.offsets) - 5} more" if len(p.new.offsets) > 5 else ""
    )


def bump_markdown(
    report: BumpReport,
    *,
    changelog: Backports | None,
    repo: str | None,
    notes: tuple[str, ...] = (),
    to_rev: str | None = None,
) -> str:
    """The body: heading, summary, verdict table, what to do with which patch, changelog.
    ``to_rev``: the revision ``--to`` named (a tag), shown beside its commit."""
    old, new = label(report.old), label(report.new)
    named = f"{code(to_rev or '')} ({code(new)})" if named_apart(to_rev, new) else code(new)
    engine = cell(report.engine or "the engine")
    lines = [
        f"## Bump {engine} from {code(old)} to {code(to_rev or new)}",
        "",
        f"This PR moves the {engine} pin from {code(old)} ({cell(report.old.kind)}) to {named}"
        f" ({cell(report.new.kind)}): {_summary(report)}.",
        "",
        f"| Patch | At {code(old, in_table=True)} | At {code(new, in_table=True)} | Offsets |",
        "|---|---|---|---|",
    ]
    for p in report.patches:
        lines.append(
            f"| {code(p.name, in_table=True)} | {_side(p, False)} | {_side(p, True)} | {_offsets(p)} |"
        )
    lines += _actions(report, new)
    for side, py, words in (
        (old, report.old_python, report.parsed(new=False)),
        (new, report.new_python, report.parsed(new=True)),
    ):
        if py is not None and words is not None and (side == new or not py.ok):
            lines += ["", f"At {code(side)}: {words}."]
    lines += _changelog(changelog, repo, old, new)
    if notes:
        lines += ["", *(f"- {cell(n)}" for n in notes)]
    lines.append("")
    return finish_markdown("\n".join(lines))


def _summary(report: BumpReport) -> str:
    conflicts = len(report.conflicts)
    if report.ok:
        return f"the stack of {plural(len(report.patches), 'patch', 'patches')} is ready for it"
    if conflicts:
        need = agree(conflicts, "needs", "need")
        return f"{of_total(conflicts, len(report.patches), 'patch', 'patches')} {need} a hand"
    return "the patched Python files do not all parse"


def _actions(report: BumpReport, new: str) -> list[str]:
    refreshed = [p for p in report.patches if p.refresh is not None and p.refresh.action == "rewrite"]
    dropped = [p for p in report.patches if p.refresh is not None and p.refresh.action == "drop"]
    if not any(p.refresh is not None for p in report.patches):
        # no --refresh: what it would drop, said from the verdicts
        dropped = [p for p in report.patches if p.new.status == "already-applied"]
    conflicts = report.conflicts
    out: list[str] = []
    for title, rows in (
        ("Refreshed", refreshed),
        (f"Dropped (already in {code(new)})", dropped),
        ("Needs a hand", conflicts),
    ):
        if not rows:
            continue
        out += ["", f"**{title}:**", ""]
        for p in rows:
            why = p.refresh.why if p.refresh is not None else verdict(p.new)
            out.append(f"- {code(p.name)}: {cell(why)}")
    return out


def _changelog(changelog: Backports | None, repo: str | None, old: str, new: str) -> list[str]:
    if changelog is None:
        return []
    head = f"### Engine changelog {code(old)}..{code(new)}, on the patched files"
    if not changelog.total:
        return ["", head, "", "No first-parent commit between the two pins changes a patched file."]
    count = plural(changelog.total, "commit")
    return [
        "",
        head,
        "",
        "<details>",
        f"<summary>{count} (newest first)</summary>",
        "",
        *commits_table(changelog.candidates, repo),
        *left_off_line(changelog.left_off, None),
        "",
        "</details>",
    ]
