"""What the bot writes to GitHub, pure: its block in the sync PR's description (the state it
reads back on the next run), the PR's whole description, and the dashboard issue.

Every text passes :func:`vimesync.report.mentions.finish_markdown` (no @mention pings, no closing
keyword closes, no marker can be planted); the state line is added after it, from shas and a step
name only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from vimesync.bot.model import SHA, Board, BotCase, BotMark, BotPlan, MergedPatch, PendingPR, StaleRecord
from vimesync.errors import BadInput, ConfigError, GitError, PatchError
from vimesync.report.mdtext import code, escape
from vimesync.report.mentions import BOT_END, BOT_START, BOT_STATE, DASHBOARD, finish_markdown
from vimesync.report.publish import splice

TITLE = "Sync dashboard"
SHOWN = 50  # PRs listed in one section of the dashboard (more: a count)
NAME = 120  # characters of a patch, engine or record name shown
STEPS = ("walk", "carry", "patches", "audit", "status", "report")
_STATE = re.compile(
    re.escape(BOT_STATE) + r"pushed=(?P<pushed>[0-9a-f]{40}) tip=(?P<tip>[0-9a-f]{40})"
    r" stopped=(?P<stopped>[a-z]{1,16}) -->"
)


def read_mark(body: str) -> tuple[BotMark, str | None] | None:
    """The bot's state in a PR description (and the step its sync stopped at), or None: the
    description holds no state line, or more than one (then it is not the bot's to trust)."""
    found = list(_STATE.finditer(body))
    if len(found) != 1:
        return None
    m = found[0]
    stopped = m["stopped"] if m["stopped"] in STEPS else None
    return BotMark(m["pushed"], m["tip"]), stopped


def state_line(mark: BotMark, stopped: str | None) -> str:
    assert SHA.fullmatch(mark.pushed) and SHA.fullmatch(mark.tip)
    return f"{BOT_STATE}pushed={mark.pushed} tip={mark.tip} stopped={stopped or 'none'} -->"


def pending_lines(prs: Sequence[PendingPR], *, reasons: bool = False) -> list[str]:
    lines = []
    for pr in prs[:SHOWN]:
        why = f": {escape(pr.reason)}" if reasons and pr.reason else ""
        lines.append(f"- #{pr.number} {escape(pr.title)}{why}")
    if len(prs) > SHOWN:
        lines.append(f"- and {len(prs) - SHOWN} more")
    return lines


def merged_lines(merged: Sequence[MergedPatch], unchecked: str | None) -> list[str]:
    """Each patch whose named engine PR merged, and whether the pin holds the merge (bounded)."""
    lines = []
    held = {True: "in the pin: drop the patch", False: "not yet in the pin", None: "in the pin: not known"}
    for m in merged[:SHOWN]:
        what = f"{code(m.patch[:NAME])} ({escape(m.engine[:NAME])})"
        lines.append(f"- {what}: {code(m.pr[:NAME])} merged, {held[m.in_pin]}")
    if len(merged) > SHOWN:
        lines.append(f"- and {len(merged) - SHOWN} more")
    if unchecked:
        lines.append(f"Not checked: {escape(unchecked)}.")
    return lines or ["None."]


def stale_lines(stale: Sequence[StaleRecord], unread: str | None) -> list[str]:
    """Each record not at the evidence head, by kind and name (bounded)."""
    if unread:
        return [escape(unread)]
    lines = [f"- {escape(r.kind[:NAME])} {code(r.name[:NAME])} at {code(r.sha[:8])}" for r in stale[:SHOWN]]
    if len(stale) > SHOWN:
        lines.append(f"- and {len(stale) - SHOWN} more")
    return lines or ["None."]


def bot_block(
    plan: BotPlan,
    tip: str,
    *,
    stopped: tuple[str, str | None, str | None] | None,  # (step, decision, next command)
    pending: Sequence[PendingPR],
    bring_in: str,
) -> str:
    """The bot's words in its PR (before the state line): where the sync stands, and on a branch
    it may not push to, what upstream has that the branch does not and the command that brings it in."""
    lines = [f"**vimesync bot**: upstream at {code(tip[:8])}."]
    if (
        stopped is not None and plan.case is not BotCase.HOLD
    ):  # held: the maintainer's branch, not the bot's stop
        step, decision, next_ = stopped
        said = decision or "the report below says which gate"
        # one full stop; a list the sync cut short keeps its "..." (else it reads as complete)
        said += "" if said.endswith(".") else "."
        lines.append(f"The sync stopped at **{step}**: {escape(said)}")
        if next_:
            lines.append(f"Next: {code(next_)}")
    if plan.case in (BotCase.HOLD, BotCase.ADOPT):  # the same words both: a held run rewrites nothing
        lines.append("This branch has commits the bot did not push: it is the maintainers', never pushed to.")
    if plan.case in (BotCase.HOLD, BotCase.ADOPT) and pending:
        lines += [
            "",
            f"Upstream moved past {code((plan.since or '')[:8])}. Pending upstream PRs:",
            *pending_lines(pending),
        ]
        lines.append(f"Bring them in: {code(bring_in)}")
    return finish_markdown("\n".join(lines))


def splice_bot(body: str, block: str, state: str) -> str:
    """``body`` with the bot's block (and its state line) between the bot markers: replaced when
    they are there once, else put first."""
    inner = f"{BOT_START}\n{block}\n{state}\n{BOT_END}"
    starts, ends = body.count(BOT_START), body.count(BOT_END)
    if starts == 0 and ends == 0:
        return f"{inner}\n\n{body}" if body else f"{inner}\n"
    i, j = body.find(BOT_START), body.find(BOT_END)
    if starts != 1 or ends != 1 or j < i:
        raise BadInput("the sync PR's description has more than one vimesync bot block: expected one")
    return body[:i] + inner + body[j + len(BOT_END) :]


def pull_body(old: str, block: str, state: str, report: str | None) -> str:
    """The sync PR's description: the bot's block, then the report between its markers as
    ``report --publish`` writes it (kept as it was when this run made none)."""
    body = splice_bot(old, block, state)
    return splice(body, report) if report is not None else body


# Why a sync could not run, by the error's class (most specific first): fixed words, never the
# error's own text (it can quote a file of the checkout).
_COULD_NOT_RUN: tuple[tuple[type[BadInput], str], ...] = (
    (ConfigError, "a configuration file (vimesync.toml, a pin, a ledger or a records file) was refused"),
    (PatchError, "a patch of the engine series was refused"),
    (GitError, "a git command failed"),
    (BadInput, "an input the sync needs is missing or refused (such as an engine source)"),
)


def could_not_run(error: BaseException) -> str:
    """The dashboard's words for a sync that could not run: a fixed phrase per error class."""
    return next((words for kind, words in _COULD_NOT_RUN if isinstance(error, kind)), "the sync failed")


# Why a run could not observe the upstream (the walk before the listing), by the error's class.
_COULD_NOT_OBSERVE: tuple[tuple[type[BadInput], str], ...] = (
    (ConfigError, "a configuration file (vimesync.toml, a pin or the policy) was refused"),
    (GitError, "the upstream does not have a commit the checkout names, or git failed on it"),
    (BadInput, "the upstream, its pin or its branch is missing or refused"),
)


def could_not_observe(error: BaseException) -> str:
    """The dashboard's words for a run that could not observe: a fixed phrase per error class."""
    return next((words for kind, words in _COULD_NOT_OBSERVE if isinstance(error, kind)), "the walk failed")


def blind_dashboard(b: Board) -> str:
    """The dashboard of a run that could not observe: that, and the sync PR as it is."""
    lines = [f"# {TITLE}", "", f"{escape(b.upstream)} and {code(b.base)}: not observed this run."]
    why = f"`vimesync walk` in a checkout of {code(b.base)} says why"
    lines += ["", f"**The run could not observe**: {escape(b.blind or '')}. {why}."]
    lines += ["", "## The sync PR"]
    if b.pull is None:
        lines.append("None open.")
    else:
        lines.append(f"#{b.pull.number} ({code(b.pull.head_ref)}): left as it is until a run can observe.")
    text = finish_markdown("\n".join(lines))
    return f"{DASHBOARD}\n{text}\n"


def dashboard(b: Board) -> str:
    """The dashboard issue's description: the same board gives the same text (it is edited only
    when the text changed)."""
    if b.blind is not None:
        return blind_dashboard(b)
    lines = [f"# {TITLE}", ""]
    lines.append(
        f"{escape(b.upstream)} is at {code(b.tip[:8])}; {code(b.base)} holds {code(b.pin[:8])}"
        + (" (up to date)." if b.pin == b.tip else ".")
    )
    if b.failed:
        why = f"`vimesync sync` in a checkout of {code(b.base)} says why"
        lines += ["", f"**The sync could not run**: {escape(b.failed)}. {why}."]
    lines += ["", "## The sync PR"]
    if b.pull is None and b.unpushed is not None:
        step, decision, next_ = b.unpushed
        lines.append(f"None open: the sync stopped at **{step}** before it made a commit to push.")
        lines.append(escape(decision or ""))
        lines.append(f"Next: {code(next_ or '')}")
    elif b.pull is None and b.declined is not None:
        n, tip = b.declined.number, code(b.declined.tip[:8])
        lines.append(
            f"None open: #{n} for upstream {tip} was closed unmerged, so the bot leaves that tip alone"
        )
        lines.append("(it does not reopen the PR or push the tip again). A new PR comes when upstream moves.")
        reopen = code(f"gh pr reopen {n}")
        lines.append(f"To sync this tip anyway, reopen #{n} (restore its branch first if deleted): {reopen}")
    elif b.pull is None and b.stale_branch is not None:
        branch, sha = b.stale_branch
        lines.append(
            f"None open: {code(branch)} is on {code(b.remote)} at {code(sha[:8])} with no sync PR, and not"
            " where the bot last pushed it, so it is left alone."
        )
        delete = shlex.join(["git", "push", b.remote, "--delete", branch])
        lines.append(f"Delete it and the next run opens the PR: {code(delete)}")
    elif b.pull is None:
        lines.append("None open.")
    else:
        if b.held:  # the maintainers' branch now: what the bot's last sync said of it is theirs to judge
            where = "has commits the bot did not push, so the bot leaves it to the maintainers" + (
                f" (the bot's last sync of it stopped at **{b.stopped}**)" if b.stopped else ""
            )
        elif b.stopped:
            where = f"stopped at **{b.stopped}** (the PR says the decision and the next command)"
        else:
            where = "every gate it checks holds"
        lines.append(f"#{b.pull.number} ({code(b.pull.head_ref)}): {where}.")
    lines += ["", "## Upstream PRs pending (not in the sync PR)"]
    lines += pending_lines(b.pending) or ["None."]
    lines += ["", "## Excluded upstream PRs"]
    lines += pending_lines(b.excluded, reasons=True) or ["None."]
    lines += ["", "## Engine patches whose upstream PRs merged (the radar)"]
    lines += merged_lines(b.merged, b.merged_unchecked)
    lines += ["", "## Evidence gone stale (recorded at another head than the sync PR's evidence head)"]
    lines += stale_lines(b.stale, b.stale_unread)
    text = finish_markdown("\n".join(lines))
    return f"{DASHBOARD}\n{text}\n"
