"""References to GitHub issues and PRs: ``owner/repo#N`` text, PR/issue/commit URLs, bare ``#N``.

Pure: strings in, :class:`Ref` records out. DEP-3 fields (Origin, Bug, Forwarded,
Applied-Upstream) hold URLs, ``owner/repo#N``, ``commit:<sha>`` or words ("no", "not-needed",
"upstream"); only the references are kept, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vimesync.github import REPO_PATTERN
from vimesync.patches.model import Dep3

GITHUB = "https://github.com"
_REPO = REPO_PATTERN
_GH_URL = re.compile(
    rf"https?://(?:www\.)?github\.com/(?P<repo>{_REPO})/(?P<what>pull|pulls|issues|commit)/(?P<id>[0-9A-Fa-f]+)"
    r"[^\s,;)>]*"
)
_SHORT = re.compile(rf"(?<![\w/.-])(?P<repo>{_REPO})#(?P<n>\d+)\b")
_COMMIT = re.compile(r"\bcommit:(?P<sha>[0-9a-fA-F]{7,40})\b")
_URL = re.compile(r"https?://[^\s<>,;]+[^\s<>,;.)]")
_BARE = re.compile(r"(?<![\w/#&])#(?P<n>\d+)\b")

# DEP-3 fields that carry references, in the order a cell lists them, with the word that says what
# the reference is ("" for the patch's own origin or bug).
REF_FIELDS = (("origin", ""), ("bug", ""), ("forwarded", "forwarded"), ("applied-upstream", "merged"))


@dataclass(frozen=True)
class Ref:
    text: str  # "vllm-project/vllm#53199", "vllm-project/vllm@1a2b3c4d", or the URL itself
    url: str
    kind: str = ""  # "" | "forwarded" | "merged"


_REMOTE = re.compile(rf"^(?:https?://|ssh://git@|git@)github\.com[:/](?P<repo>{_REPO}?)(?:\.git)?/?$")


def github_repo_of(remote_url: str) -> str | None:
    """``owner/repo`` of a github.com remote URL (https, ssh or scp-like), else None."""
    m = _REMOTE.match(remote_url.strip())
    return m["repo"] if m else None


def pr_url(repo: str, number: int) -> str:
    return f"{GITHUB}/{repo}/pull/{number}"


def pr_ref(repo: str | None, number: int) -> Ref:
    """The link for PR ``number`` of ``repo`` (plain ``#N`` with no URL when the repo is unknown)."""
    if not repo:
        return Ref(text=f"#{number}", url="")
    return Ref(text=f"{repo}#{number}", url=pr_url(repo, number))


def find_refs(text: str, *, default_repo: str | None = None, kind: str = "") -> list[Ref]:
    """Every reference in ``text``, in order: GitHub URLs as ``owner/repo#N``/``owner/repo@sha8``,
    ``owner/repo#N`` as written, ``commit:<sha>`` (linked when ``default_repo`` is known), other URLs
    verbatim. Words such as "no" or "not-needed" yield nothing."""
    found: list[tuple[int, Ref]] = []
    # One flag per character: a span is free when none of its characters is taken. The matches of
    # one pattern never overlap, so each pass checks and marks every character at most once:
    # linear in the text (a list of taken spans scanned per match was quadratic).
    flags = bytearray(len(text))

    def free(m: re.Match[str]) -> bool:
        return flags.find(1, m.start(), m.end()) == -1

    def take(span: tuple[int, int]) -> None:
        flags[span[0] : span[1]] = b"\x01" * (span[1] - span[0])

    for m in _GH_URL.finditer(text):
        repo, what, ident = m["repo"], m["what"], m["id"]
        if what == "commit":
            ref = Ref(text=f"{repo}@{ident[:8]}", url=f"{GITHUB}/{repo}/commit/{ident}", kind=kind)
        else:
            n = int(ident)
            path = "pull" if what.startswith("pull") else "issues"
            ref = Ref(text=f"{repo}#{n}", url=f"{GITHUB}/{repo}/{path}/{n}", kind=kind)
        found.append((m.start(), ref))
        take(m.span())
    for m in _URL.finditer(text):
        if free(m):
            found.append((m.start(), Ref(text=m.group(0), url=m.group(0), kind=kind)))
            take(m.span())
    for m in _SHORT.finditer(text):
        if free(m):
            repo, n = m["repo"], int(m["n"])
            found.append((m.start(), Ref(text=f"{repo}#{n}", url=f"{GITHUB}/{repo}/issues/{n}", kind=kind)))
            take(m.span())
    for m in _COMMIT.finditer(text):
        if free(m):
            sha = m["sha"]
            if default_repo:
                ref = Ref(
                    text=f"{default_repo}@{sha[:8]}", url=f"{GITHUB}/{default_repo}/commit/{sha}", kind=kind
                )
            else:
                ref = Ref(text=f"commit {sha[:8]}", url="", kind=kind)
            found.append((m.start(), ref))
            take(m.span())
    if default_repo:
        for m in _BARE.finditer(text):
            if free(m):
                found.append((m.start(), _with_kind(pr_ref(default_repo, int(m["n"])), kind)))
    return [r for _, r in sorted(found, key=lambda x: x[0])]


def _with_kind(ref: Ref, kind: str) -> Ref:
    return Ref(text=ref.text, url=ref.url, kind=kind)


def dep3_refs(dep3: Dep3 | None, *, default_repo: str | None = None) -> tuple[Ref, ...]:
    """The references of a DEP-3 header, field by field in REF_FIELDS order, each link once."""
    if dep3 is None:
        return ()
    refs: list[Ref] = []
    seen: set[str] = set()
    for key, kind in REF_FIELDS:
        for value in dep3.get_all(key):
            for ref in find_refs(value, default_repo=default_repo, kind=kind):
                if ref.text not in seen:
                    seen.add(ref.text)
                    refs.append(ref)
    # Vendor bug fields (Bug-Debian, Bug-Ubuntu, ...) after the generic ones.
    for k, value in dep3.fields:
        if k.startswith("bug-"):
            for ref in find_refs(value, default_repo=default_repo):
                if ref.text not in seen:
                    seen.add(ref.text)
                    refs.append(ref)
    return tuple(refs)
