"""What a first-parent commit's message says: the PR it lands (``Merge pull request #N``, a
``(#N)`` suffix), the PR's title, and what a revert reverts.

Commit messages are hostile input: every pattern here runs in linear time on any text, and PR
numbers are at most 9 digits (int() of thousands of digits is slow, and no PR has them).
"""

from __future__ import annotations

import re

from vimesync.upstream.model import Commit

MERGE_PR_RE = re.compile(r"^Merge pull request #(\d{1,9}) from \S")
_SUFFIX_TAIL_RE = re.compile(r"\(#(\d{1,9})\)\Z")  # matched on the right-stripped end only
SUFFIX_TAIL = len("(#123456789)")
REVERT_RE = re.compile(r'^Revert "(.*)"(?:\s*\(#\d+\))?\s*$')
REVERTS_SHA_RE = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


def split_suffix(subject: str) -> tuple[str, int | None]:
    """``("Fix x", 12)`` for ``"Fix x (#12)"``; ``(subject, None)`` without a ``(#N)`` suffix.

    Only the end of the right-stripped subject is looked at, so a long run of spaces costs one
    pass (a ``\\s*\\(#\\d+\\)\\s*$`` search is quadratic on it).
    """
    text = subject.rstrip()
    m = _SUFFIX_TAIL_RE.search(text, max(0, len(text) - SUFFIX_TAIL))
    if m is None:
        return subject, None
    return text[: m.start()].rstrip(), int(m.group(1))


def pr_number(commit: Commit) -> int | None:
    """The PR a first-parent commit lands, from its subject; None for a direct commit."""
    if m := MERGE_PR_RE.match(commit.subject):
        return int(m.group(1))
    return split_suffix(commit.subject)[1]


def pr_title(commit: Commit) -> str:
    """The PR title as git records it: GitHub puts it on the first body line of a PR merge."""
    if MERGE_PR_RE.match(commit.subject):
        for line in commit.body.splitlines():
            if line.strip():
                return line.strip()
        return commit.subject
    return split_suffix(commit.subject)[0].strip()


def revert_target(commit: Commit) -> tuple[str | None, str | None]:
    """(reverted sha from the body, reverted subject from the quotes) for a revert commit."""
    m = REVERT_RE.match(commit.subject)
    sha_m = REVERTS_SHA_RE.search(commit.body)
    if not m and not sha_m:
        return None, None
    return (sha_m.group(1) if sha_m else None), (m.group(1) if m else None)
