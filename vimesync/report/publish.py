"""Publish the report into a pull request's description, between markers, idempotently.

:func:`splice` is pure: the human-written text outside the markers is kept byte for byte, the
text between them replaced (its @mentions neutralised by
:func:`vimesync.report.mentions.neutralize_mentions`, so publishing pings nobody); with no markers
the block is appended. :func:`publish` reads and edits the PR through
:class:`vimesync.github.GitHubClient`, the one place that talks to GitHub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vimesync.errors import BadInput
from vimesync.github import REPO_PATTERN, GitHubClient
from vimesync.report.mentions import END, START, WORD_JOINER, finish_markdown
from vimesync.settings import GitHubSettings
from vimesync.text import visible

__all__ = ["END", "START", "PublishResult", "parse_target", "publish", "require_token", "splice"]

# GitHub refuses a longer pull-request description (422 "body is too long").
MAX_BODY = 65_536  # characters

_TARGET = re.compile(rf"(?P<repo>{REPO_PATTERN})#(?P<n>[1-9][0-9]{{0,8}})")


# GitHub's longest pull-request title.
MAX_TITLE = 256  # characters


@dataclass(frozen=True)
class PublishResult:
    target: str  # "owner/repo#N"
    url: str  # the PR's html_url
    changed: bool  # False: the description (and title) already held this report
    title: str | None = None  # the title set, when one was given


def pr_title(title: str) -> str:
    """The report's title as a PR title: one line, controls shown as escapes, no @mention (a word
    joiner after each ``@``: no handle follows it), at most GitHub's 256 characters."""
    text = visible(title).replace("@", "@" + WORD_JOINER)
    return text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…"


def parse_target(target: str) -> tuple[str, int]:
    """``owner/repo#N`` -> ``("owner/repo", N)``; BadInput otherwise."""
    m = _TARGET.fullmatch(target.strip())
    if not m:
        raise BadInput(f"--publish {target!r}: expected owner/repo#N, e.g. THUDM/slime#2437")
    return m["repo"], int(m["n"])


def splice(body: str | None, report: str) -> str:
    """``body`` with ``report`` between the markers (appended when there are none).

    The report's @mentions are neutralised (``@name`` -> ``<code>@name</code>``); the human text
    outside the markers is not touched. The block uses the body's line endings (GitHub's web editor
    stores CRLF), so splicing the same report into its own output changes nothing.
    """
    body = body or ""
    nl = "\r\n" if "\r\n" in body else "\n"
    # Neutralised again here (the renderer already did: both are idempotent), so that no report,
    # whoever rendered it, can ping anyone or plant a second marker.
    text = finish_markdown(report.replace("\r\n", "\n")).rstrip("\n").replace("\n", nl)
    block = f"{START}{nl}{text}{nl}{END}"
    starts, ends = body.count(START), body.count(END)
    if starts == 0 and ends == 0:
        human = body.rstrip()
        return f"{human}{nl}{nl}{block}{nl}" if human else f"{block}{nl}"
    i, j = body.find(START), body.find(END)
    if starts != 1 or ends != 1 or j < i:
        # Which text is ours is then a guess: refuse rather than overwrite what a human wrote.
        raise BadInput(
            f"the PR description has {starts} start and {ends} end vimesync report markers"
            + (", the end before the start" if starts == ends == 1 else "")
            + ": expected one pair",
            hint=f"edit the PR description to keep one {START} ... {END} pair (or none) and publish again",
        )
    return body[:i] + block + body[j + len(END) :]


def require_token(github: GitHubSettings) -> str:
    """The token publishing needs (``GITHUB_TOKEN`` or ``GH_TOKEN``); BadInput if unset."""
    token = github.token
    if not token:
        raise BadInput(
            "--publish needs a GitHub token",
            hint="set GITHUB_TOKEN (or GH_TOKEN) to a token that may edit the PR",
        )
    return token


def publish(
    target: str, report: str, github: GitHubSettings | GitHubClient, *, title: str | None = None
) -> PublishResult:
    """Put ``report`` into the description of PR ``target`` (``owner/repo#N``) and, when given,
    ``title`` as its title (the sync PR's title is the report's: ``[Sync] Mirror Slime through
    8c17b676 (#2437/#2434)``); one PATCH, only on change.

    ``github``: the settings a client for the target's repository is made with (a token
    required), or such a client.
    """
    title = None if title is None else pr_title(title)
    repo, number = parse_target(target)
    _check_length(target, splice(None, report))  # before any request: the report alone is too long
    own = isinstance(github, GitHubSettings)
    if isinstance(github, GitHubSettings):
        require_token(github)
        client = GitHubClient(repo, github)
    else:
        client = github
    if client.repo.lower() != repo.lower():
        raise BadInput(f"--publish {target}: the GitHub client is for {client.repo}")
    try:
        pull = client.pull_request(number)
        new = splice(pull.body, report)
        _check_length(target, new)  # never sent: GitHub would refuse it
        retitle = title is not None and title != pull.title
        changed = new != pull.body or retitle
        if changed:
            client.set_pull_body(number, new, title=title if retitle else None)
        return PublishResult(target=f"{repo}#{number}", url=pull.html_url, changed=changed, title=title)
    finally:
        if own:
            client.close()


def _check_length(target: str, body: str) -> None:
    if len(body) > MAX_BODY:
        raise BadInput(
            f"--publish {target}: the description would be {len(body):,} characters, over GitHub's "
            f"limit of {MAX_BODY:,}; nothing was published",
            hint="write the report to a file with --output and attach or link it instead",
        )
