"""Engine commits as GitHub-flavoured Markdown: ``pin radar``'s backport candidates and ``pin
bump``'s changelog between two pins. Subjects are upstream-written: every cell is escaped
(pipes, HTML, backticks, newlines, bare ``#N``), and the caller neutralises mentions."""

from __future__ import annotations

from collections.abc import Sequence

from vimesync.report.backports import Candidate
from vimesync.report.links import pr_ref
from vimesync.report.mdtext import DASH, cell, code, link
from vimesync.text import plural

RELATION = {"same-lines": "the same lines", "same-file": "the same file"}


def pr_cell(number: int | None, repo: str | None) -> str:
    """``owner/repo#N`` linked when the repository is known; a code ``#N`` otherwise."""
    if number is None:
        return DASH
    return link(pr_ref(repo, number))


def commits_table(commits: Sequence[Candidate], repo: str | None) -> list[str]:
    """One row per commit: its sha, PR, subject, what it touches and whose."""
    lines = ["| Commit | PR | Subject | Touches | Patches |", "|---|---|---|---|---|"]
    for c in commits:
        patches = ", ".join(code(p, in_table=True) for p in c.patches) or DASH
        subject = cell(c.subject) or DASH  # every #N as code: the PR column links
        sha = code(c.sha[:12], in_table=True)
        lines.append(f"| {sha} | {pr_cell(c.pr, repo)} | {subject} | {RELATION[c.relation]} | {patches} |")
    return lines


def left_off_line(left_off: int, flag: str | None = "--max-candidates") -> list[str]:
    if left_off <= 0:
        return []
    raise_it = f" (raise {code(flag)} to list them)" if flag else ""
    return ["", f"… and {plural(left_off, 'more commit')}{raise_it}."]
