"""Publish the report into a pull request's description, between markers, idempotently.

:func:`splice` is pure: the human-written text outside the markers is kept byte for byte, the
text between them replaced; with no markers the block is appended. :func:`publish` is the one
place that talks to GitHub for publishing (PyGithub). The token comes from ``GITHUB_TOKEN``
(or ``GH_TOKEN``) and never appears in a message; ``VIMESYNC_GITHUB_API`` (else ``GITHUB_API_URL``)
points at GitHub Enterprise or, in tests, a loopback server.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from vimesync.errors import BadInput, GitHubError

START = "<!-- vimesync:report:start -->"
END = "<!-- vimesync:report:end -->"
DEFAULT_API = "https://api.github.com"

_TARGET = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)#(?P<n>[1-9][0-9]*)$")


@dataclass(frozen=True)
class PublishResult:
    target: str  # "owner/repo#N"
    url: str  # the PR's html_url
    changed: bool  # False: the description already held this report


def parse_target(target: str) -> tuple[str, int]:
    """``owner/repo#N`` -> ``("owner/repo", N)``; BadInput otherwise."""
    m = _TARGET.match(target.strip())
    if not m:
        raise BadInput(f"--publish {target!r}: expected owner/repo#N, e.g. THUDM/slime#2437")
    return m["repo"], int(m["n"])


def splice(body: str | None, report: str) -> str:
    """``body`` with ``report`` between the markers (appended when there are none).

    The block uses the body's line endings (GitHub's web editor stores CRLF), so splicing the same
    report into its own output changes nothing.
    """
    body = body or ""
    nl = "\r\n" if "\r\n" in body else "\n"
    text = report.replace("\r\n", "\n").rstrip("\n").replace("\n", nl)
    block = f"{START}{nl}{text}{nl}{END}"
    starts, ends = body.count(START), body.count(END)
    if starts == 0 and ends == 0:
        human = body.rstrip()
        return f"{human}{nl}{nl}{block}{nl}" if human else f"{block}{nl}"
    i, j = body.find(START), body.find(END)
    if starts != 1 or ends != 1 or j < i:
        raise BadInput(
            "the PR description has unbalanced vimesync report markers",
            hint=f"keep exactly one {START} ... {END} pair (or remove both) and publish again",
        )
    return body[:i] + block + body[j + len(END) :]


def token_from_env() -> str:
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        raise BadInput(
            "--publish needs a GitHub token", hint="set GITHUB_TOKEN (a token that may edit the PR)"
        )
    return token


def publish(
    target: str, report: str, *, token: str | None = None, api_url: str | None = None
) -> PublishResult:
    """Put ``report`` into the description of PR ``target`` (``owner/repo#N``); PATCH only on change."""
    from github import Auth, Github, GithubException

    repo_name, number = parse_target(target)
    token = token or token_from_env()
    # Same variable as vimesync.upstream.github; GITHUB_API_URL is what GitHub Actions sets.
    api = api_url or os.environ.get("VIMESYNC_GITHUB_API") or os.environ.get("GITHUB_API_URL") or DEFAULT_API
    gh = Github(base_url=api.rstrip("/"), auth=Auth.Token(token), retry=None, timeout=30)
    try:
        pr = gh.get_repo(repo_name, lazy=True).get_pull(number)
        body = pr.body or ""
        new = splice(body, report)
        if new != body:
            pr.edit(body=new)
        return PublishResult(target=f"{repo_name}#{number}", url=pr.html_url or "", changed=new != body)
    except GithubException as exc:
        message = exc.data.get("message") if isinstance(exc.data, dict) else None
        hint = "check that GITHUB_TOKEN may edit this pull request" if exc.status in (401, 403) else None
        raise GitHubError(
            f"GitHub refused {target}: HTTP {exc.status} {message or ''}".rstrip(), hint=hint
        ) from None
    except OSError as exc:  # connection refused, DNS, timeouts (requests' errors are OSErrors)
        raise GitHubError(f"cannot reach GitHub at {api}: {type(exc).__name__}") from None
    finally:
        gh.close()
