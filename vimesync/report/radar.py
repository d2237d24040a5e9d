"""``pin radar``: where the upstream work each patch references stands, and what to do with it.

A patch's DEP-3 header (Origin, Bug, Forwarded, Applied-Upstream) names PRs of the engine's own
repository (``owner/repo#N``, PR URLs) or commits of it. Each PR's state comes from GitHub (open,
merged with its merge commit, closed unmerged) through an ``ask`` function the caller hands in;
a git pin then says whether it contains the merge commit (``git merge-base --is-ancestor``) and
the source's tags which release first did (``git tag --contains``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.errors import GitError, GitHubError
from vimesync.github import PullState
from vimesync.patches.model import Dep3
from vimesync.report.links import Ref, dep3_refs

Verdict = Literal["in-pin", "merged", "merged-unknown", "open", "closed", "unknown", "none"]
WORDS: dict[str, str] = {
    "in-pin": "in the pin: drop it",
    "merged": "merged upstream, absent from the pin: keep until the next bump",
    "merged-unknown": "merged upstream; whether the pin holds it is not known (not a git pin)",
    "open": "open upstream",
    "closed": "closed unmerged: the patch is ours to keep",
    "unknown": "not known: GitHub was not asked",
    "none": "no upstream reference",
}
_ORDER: tuple[Verdict, ...] = ("in-pin", "merged", "merged-unknown", "open", "closed", "unknown")
MAX_ASKED = 200  # PRs asked about in one run (each one GET, revalidated through the ETag cache)


@dataclass(frozen=True)
class UpstreamRef:
    text: str  # "vllm-project/vllm#123" or "vllm-project/vllm@1a2b3c4d"
    number: int | None = None  # a PR (or issue) number
    commit: str | None = None  # a commit named directly (Applied-Upstream: commit:..., /commit/ URL)


@dataclass(frozen=True)
class RefState:
    ref: UpstreamRef
    state: Literal["open", "merged", "closed", "unknown"]
    merge_commit: str | None = None
    in_pin: bool | None = None  # None: not known (not merged, or the pin is not git)
    first_tag: str | None = None  # the first release tag holding the merge commit
    why: str = ""  # what could not be asked, and why


@dataclass(frozen=True)
class PatchRadar:
    name: str
    refs: tuple[RefState, ...]
    verdict: Verdict

    @property
    def words(self) -> str:
        words = WORDS[self.verdict]
        if self.verdict == "merged":
            tags = [r.first_tag for r in self.refs if r.state == "merged" and r.first_tag]
            if tags:
                words += f" (first in {tags[0]})"
        if self.verdict == "unknown":
            whys = [r.why for r in self.refs if r.why]
            if whys:
                words = f"not known: {whys[0]}"
        return words


@dataclass(frozen=True)
class GitPin:
    """A git pin: the repository and the commit pinned."""

    repo: Path
    commit: str


def upstream_refs(dep3: Dep3 | None, repo: str) -> tuple[UpstreamRef, ...]:
    """The references of ``dep3`` to PRs or commits of ``repo`` (others are not the engine's)."""
    return engine_refs(dep3_refs(dep3, default_repo=repo), repo)


def engine_refs(refs: Sequence[Ref], repo: str) -> tuple[UpstreamRef, ...]:
    """Those of ``refs`` (a header's, :func:`vimesync.report.links.dep3_refs`) that name a PR or
    a commit of ``repo``."""
    out: list[UpstreamRef] = []
    owner = repo.lower()
    for ref in refs:
        name, sep, rest = ref.text.partition("#")
        if sep and name.lower() == owner and rest.isdigit():
            out.append(UpstreamRef(f"{repo}#{int(rest)}", number=int(rest)))
            continue
        name, sep, _ = ref.text.partition("@")
        if sep and name.lower() == owner and "/commit/" in ref.url:
            sha = ref.url.rsplit("/", 1)[1].lower()
            out.append(UpstreamRef(ref.text, commit=sha))
    return tuple(out)


def _contains(pin: GitPin, sha: str) -> bool:
    try:
        full = git.resolve(pin.repo, sha)
    except GitError:
        return False  # the source does not have the commit: nor does the pin
    return git.is_ancestor(pin.repo, full, pin.commit)


def _first_tag(pin: GitPin, sha: str) -> str | None:
    try:
        out = git.run(pin.repo, ["tag", "--contains", sha, "--sort=creatordate"])
    except GitError:
        return None
    tags = out.decode(errors="replace").split()
    return tags[0] if tags else None


def scan_patches(
    patches: Sequence[tuple[str, Sequence[UpstreamRef]]],
    *,
    ask: Callable[[int], PullState] | None,
    why_not: str = "",
    pin: GitPin | None = None,
    max_asked: int = MAX_ASKED,
) -> tuple[PatchRadar, ...]:
    """Every patch's references to the engine (:func:`upstream_refs`), their states, and a
    verdict per patch. ``ask`` is None when GitHub may not be asked (``why_not`` says why); at
    most ``max_asked`` PRs are asked about; after a failure other than a 404, nothing more is
    asked and the rest say so."""
    asked: dict[int, PullState | str] = {}
    stop = why_not
    rows = []
    for name, refs in patches:
        states = []
        for ref in refs:
            if ref.commit is not None:
                states.append(_commit_state(ref, pin))
                continue
            assert ref.number is not None
            if ref.number not in asked:
                if ask is None or stop or len(asked) >= max_asked:
                    reason = stop or (f"over {max_asked} PRs" if ask is not None else "no client")
                    states.append(
                        RefState(ref, "unknown", why=f"could not ask GitHub about {ref.text}: {reason}")
                    )
                    continue
                try:
                    asked[ref.number] = ask(ref.number)
                except GitHubError as exc:
                    if "(404)" in exc.message:
                        asked[ref.number] = f"{ref.text} is not a pull request (404: an issue?)"
                    else:
                        stop = exc.message
                        asked[ref.number] = exc.message
            got = asked[ref.number]
            if isinstance(got, str):
                states.append(RefState(ref, "unknown", why=got))
            else:
                states.append(_pr_state(ref, got, pin))
        rows.append(PatchRadar(name, tuple(states), _verdict(states, pin)))
    return tuple(rows)


def _commit_state(ref: UpstreamRef, pin: GitPin | None) -> RefState:
    assert ref.commit is not None
    if pin is None:
        return RefState(ref, "merged", ref.commit)
    inside = _contains(pin, ref.commit)
    return RefState(ref, "merged", ref.commit, inside, None if inside else _first_tag(pin, ref.commit))


def _pr_state(ref: UpstreamRef, got: PullState, pin: GitPin | None) -> RefState:
    if got.state != "merged" or got.merge_commit is None:
        return RefState(ref, got.state)
    if pin is None:
        return RefState(ref, "merged", got.merge_commit)
    inside = _contains(pin, got.merge_commit)
    tag = None if inside else _first_tag(pin, got.merge_commit)
    return RefState(ref, "merged", got.merge_commit, inside, tag)


def _verdict(states: Sequence[RefState], pin: GitPin | None) -> Verdict:
    if not states:
        return "none"
    found: set[Verdict] = set()
    for s in states:
        if s.state == "merged":
            found.add("in-pin" if s.in_pin else "merged" if s.in_pin is False else "merged-unknown")
        else:
            found.add(s.state)
    return next(v for v in _ORDER if v in found)
