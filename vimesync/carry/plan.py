"""What a carry brings over, in which order, and the commit message each carried item gets.

The walk (``vimesync.upstream.pipeline``) gives the range's PRs, classified by the policy and
marked ``mirrored`` when the downstream (at ``--onto``) already carries them. Carried: the
applicable PRs, oldest first (``--pr`` picks some of them); with ``--direct include`` the direct
commits too, in first-parent order. Every item's change is what the first-parent walk attributes
to it: each of its first-parent commits against its first parent (a squash commit, a rebase
series, a merge PR's ``M^1..M``).

Messages: upstream messages are hostile text. Ours keep their words but never their power: control
characters are dropped, the body is capped, a ``(cherry picked from commit …)`` line is defused
(``walk`` reads it anywhere in a message), and our trailers always form the last paragraph, so
a trailer-looking line of the upstream body is never read as one (``git interpret-trailers``
reads the last paragraph only).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vimesync import git
from vimesync.carry.model import Item, SkippedItem
from vimesync.upstream.messages import MERGE_PR_RE
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED, WalkResult
from vimesync.upstream.policy import Policy

MAX_BODY = 32 * 1024  # characters of an upstream body kept in a carried commit
MAX_SUBJECT = 500
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CHERRY = re.compile(r"\(cherry picked from commit", re.I)
_IDENT_BAD = re.compile(r"[<>\x00-\x1f\x7f]")


@dataclass(frozen=True)
class CarryPlan:
    """What a carry of a classified walk brings over, in order, and what it leaves out."""

    base: str
    tip: str
    items: tuple[Item, ...]
    skipped: tuple[SkippedItem, ...]  # excluded, mirrored, direct commits left out, --pr not picked
    notes: tuple[str, ...] = ()


def build_plan(
    walk: WalkResult, *, prs: Sequence[int] = (), direct: str = "skip", policy: Policy | None = None
) -> CarryPlan:
    """The items of a classified walk (see the module docstring)."""
    first = set(walk.first_parents)
    position = {sha: i for i, sha in enumerate(walk.first_parents)}
    wanted = set(prs)
    known = {pr.number for pr in walk.prs}
    missing = sorted(wanted - known)
    notes = [f"#{n} is not a PR of {walk.base[:12]}..{walk.tip[:12]}" for n in missing]
    entries: list[tuple[int, Item | SkippedItem]] = []
    for pr in walk.prs:
        d = pr.decision
        status = d.status if d else APPLICABLE
        pos = position.get(pr.merge_commit, 0)
        if wanted and pr.number not in wanted:
            continue
        if status == EXCLUDED:
            reason = f"excluded by the policy: {d.reason if d else ''}".rstrip(": ")
            if d and d.rule:
                reason += f" (rule {d.rule})"
            entries.append((pos, SkippedItem(pr.number, pr.title, reason, pr.merge_commit)))
            continue
        if status == MIRRORED:
            reason = d.reason if d and d.reason else "already downstream"
            entries.append((pos, SkippedItem(pr.number, pr.title, reason, pr.merge_commit)))
            continue
        steps = tuple(s for s in pr.commits if s in first) or (pr.merge_commit,)
        excluded = _excluded_rules(pr.paths, policy)
        entries.append(
            (pos, Item(pr.number, pr.title, pr.kind.value, steps, pr.merge_commit, excluded=excluded))
        )
    if not wanted:
        for c in walk.direct_commits:
            pos = position.get(c.sha, 0)
            if c.mirrored_by:
                why = f"already downstream: {c.mirrored_by}"
                entries.append((pos, SkippedItem(None, c.title, why, c.sha)))
            elif direct == "include":
                entries.append((pos, Item(None, c.title, "direct", (c.sha,), c.sha)))
            else:
                why = "direct push (no PR): --direct include carries it"
                entries.append((pos, SkippedItem(None, c.title, why, c.sha)))
    entries.sort(key=lambda e: e[0])
    items = tuple(e for _, e in entries if isinstance(e, Item))
    skipped = tuple(e for _, e in entries if isinstance(e, SkippedItem))
    return CarryPlan(base=walk.base, tip=walk.tip, items=items, skipped=skipped, notes=tuple(notes))


def _excluded_rules(paths: Sequence[str], policy: Policy | None) -> tuple[tuple[str, str], ...]:
    """(path, "policy rule N: reason") for each of a carried PR's paths under an exclude rule's
    ``paths`` (also when an include rule carries the PR: its excluded area stays out)."""
    rules = [r for r in (policy.rules if policy else ()) if r.action == "exclude" and r.paths is not None]
    out = []
    for path in paths:
        for rule in rules:
            if rule.path_matches([path]):
                out.append((path, f"policy rule {rule.index}: {rule.reason}"))
                break
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Upstream commits: author, message


@dataclass(frozen=True)
class Meta:
    author_name: str
    author_email: str
    author_date: str  # "<unix seconds> <+zone>", as git records it
    message: str
    parents: tuple[str, ...] = ()


def clean_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def one_line(text: str) -> str:
    """Upstream text (a title, a path, a reason) as one defused line of a message we write: no
    line break to start a paragraph (or a trailer) of its choosing, no provenance phrase."""
    return defuse(" ".join(clean_text(text).split()))


def _ident(value: str, fallback: str) -> str:
    value = _IDENT_BAD.sub("", value).strip()
    return value[:200] or fallback


MAX_COMMIT = 1 << 20  # bytes of an upstream commit object read (its headers and message), as walk does


def read_meta(cat: git.CatFile, sha: str) -> Meta:
    raw = cat.read(sha, head=MAX_COMMIT)
    head, _, message = raw.partition(b"\n\n")
    name, email, date = "unknown", "unknown@unknown", ""
    parents = []
    for line in head.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[7:].decode().strip())
        elif line.startswith(b"author "):
            text = line[7:].decode("utf-8", "replace")
            m = re.fullmatch(r"(.*?)\s*<([^<>]*)>\s*(\d{1,15}) ([+-]\d{4})", text)
            if m:
                name, email, date = m.group(1), m.group(2), f"{m.group(3)} {m.group(4)}"
    return Meta(
        author_name=_ident(name, "unknown"),
        author_email=_ident(email, "unknown@unknown"),
        author_date=date,
        message=message.decode("utf-8", "replace"),
        parents=tuple(parents),
    )


def _body_of(message: str, *, merge: bool) -> tuple[str, str]:
    """(subject, body) of an upstream message; a PR merge's subject is the PR title (its first
    body line), and its body what follows."""
    text = clean_text(message).strip("\n")
    subject, _, body = text.partition("\n")
    if merge and MERGE_PR_RE.match(subject):
        rest = body.strip("\n")
        title, _, body = rest.partition("\n")
        subject = title.strip() or subject
    return subject.strip()[:MAX_SUBJECT], body.strip("\n")


def defuse(body: str) -> str:
    """The body with ``(cherry picked from commit …)`` defused and its size capped."""
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY].rstrip() + "\n[… cut by vimesync carry]"
    return _CHERRY.sub("(upstream note: cherry picked from commit", body)


def trailers(item: Item, repo: str | None) -> list[str]:
    lines = []
    if item.pr is not None:
        lines.append(f"Upstream-PR: {repo or ''}#{item.pr}")
    lines.append(f"Upstream-Commit: {item.upstream_commit}")
    return lines


MAX_RESOLVED = 100  # Carry-Resolved trailers in one message (then one that counts the rest)


def message_for(
    item: Item,
    metas: Sequence[Meta],
    repo: str | None,
    left_out: Sequence[tuple[str, str]] = (),
    resolved: Sequence[str] = (),
) -> str:
    """The carried commit's message: subject, body, what was left out, trailers; ``resolved``
    (the files a maintainer resolved by hand) adds a ``Carry-Resolved:`` trailer for each."""
    last = metas[-1]
    if item.kind == "rebase" and len(metas) > 1:
        subject = f"{' '.join(clean_text(item.title).split())[:MAX_SUBJECT]} (#{item.pr})"  # one line
        body = "Rebase-merged upstream as:\n" + "\n".join(
            f"- {_body_of(m.message, merge=False)[0]}" for m in metas
        )
    else:
        subject, body = _body_of(last.message, merge=item.kind == "merge")
    subject = defuse(subject) or f"Upstream commit {item.upstream_commit[:12]}"
    parts = [subject]
    if body.strip():
        parts.append(defuse(body))
    if left_out:
        lines = [f"- {one_line(path)} ({one_line(why)})" for path, why in left_out]
        parts.append("Left out by vimesync carry (excluded paths):\n" + "\n".join(lines))
    lines = trailers(item, repo) + [f"Carry-Resolved: {one_line(p)}" for p in resolved[:MAX_RESOLVED]]
    if len(resolved) > MAX_RESOLVED:
        lines.append(f"Carry-Resolved: … and {len(resolved) - MAX_RESOLVED} more")
    parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def author_env(meta: Meta) -> dict[str, str]:
    env = {"GIT_AUTHOR_NAME": meta.author_name, "GIT_AUTHOR_EMAIL": meta.author_email}
    if meta.author_date:
        env["GIT_AUTHOR_DATE"] = meta.author_date
    return env
