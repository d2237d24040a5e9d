"""Which upstream PRs the downstream already carries.

Evidence, strongest first:

1. trailers in downstream messages (as git parses them: the message's last paragraph):
   ``Upstream-PR: owner/repo#N``, ``Upstream-Commit: <sha>``,
   ``(cherry picked from commit <sha>)``, or the very same commit in downstream history;
2. ``git patch-id --stable`` equality of the PR's whole diff, or of every one of its commits,
   with downstream commits (survives reworded messages and moved line numbers);
3. similar content: most of the PR's changed lines (per file) appear in one downstream commit
   (survives small conflict edits, which change a patch-id).

Upstream paths are rewritten through the path map (``slime/`` -> ``vime/``) and the lines of
their hunks through the ``[[upstream.translate]]`` rules before comparing, as the carry would
write them: a port made by hand (translated) has the patch-id of the translated upstream diff.
Downstream is read with ONE streamed ``git log -p`` piped through ONE ``git patch-id --stable``
into a DownstreamIndex (upstream/downstreamindex.py); upstream diffs likewise with one
``git log --no-walk --stdin`` and one patch-id, both streamed and bounded (upstream/difflog.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vimesync import git
from vimesync.errors import GitError, GitTimeout
from vimesync.pathmap import PathMap
from vimesync.upstream.diffkeys import line_keys, map_paths, patch_ids
from vimesync.upstream.difflog import BIG_FILES, CONTENT_SECONDS, MAX_COMMIT_TEXT, bounded, stream_commits
from vimesync.upstream.downstreamindex import DownstreamIndex, lookup_commit
from vimesync.upstream.model import APPLICABLE, MIRRORED, Decision, DirectCommit, PrKind, PullRequest

if TYPE_CHECKING:
    from vimesync.upstream.translate import Transform

SIMILARITY = 0.75  # share of changed lines that must agree for "similar content"
MIN_LINES = 3  # below this, similarity proves nothing (a one-line bump matches any other)
# Translation matches made in the upstream diffs of one walk (each costs a few microseconds in
# RE2's Python callback): past them, diffs take no part in matching, as those over the bounds.
MAX_TRANSLATED_MATCHES = 1_000_000


@dataclass(frozen=True)
class UpstreamDiff:
    sha: str
    is_merge: bool
    diff: bytes  # path-mapped; a merge's is against its first parent; empty when over the bounds
    whole: bool = True  # False: the diff was over the bounds and takes no part in matching


def upstream_diffs(
    repo: Path, shas: Iterable[str], path_map: PathMap, transform: Transform | None = None
) -> dict[str, UpstreamDiff]:
    """sha -> path-mapped (and translated) diff of each commit, in one ``git log --no-walk --stdin``."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    args = [*BIG_FILES, "log", "--no-walk=unsorted", "--stdin", "-p", "--no-renames"]
    args.append("--diff-merges=first-parent")
    # Parents go in the indented message area, which patch-id skips.
    fmt = "--format=commit %H%n    %P"
    stdin = "\n".join(wanted).encode() + b"\n"
    out = {}
    left = MAX_TRANSLATED_MATCHES
    log = git.stream(repo, [*args, "--no-color", fmt], input=stdin, deadline=CONTENT_SECONDS)
    try:
        for sha, text, whole in stream_commits(log):
            parents = text.split(b"\n", 2)[1].split() if text.count(b"\n") >= 2 else []
            diff: bytes | None = map_paths(text, path_map) if whole else b""
            if whole and transform is not None:
                diff, used = transform.diff(diff or b"", left) if left > 0 else (None, 0)
                left -= used
            ok = whole and diff is not None
            shown = diff if diff is not None and ok else b""
            out[sha] = UpstreamDiff(sha=sha, is_merge=len(parents) > 1, diff=shown, whole=ok)
    except GitTimeout:
        # git's own diffing ran too long (hostile content): the commit it was on and every later
        # one take no part in content matching, like a diff over the bounds.
        done = [s for s in wanted if s in out]
        if done:
            out.pop(done[-1])
        for s in wanted:
            out.setdefault(s, UpstreamDiff(sha=s, is_merge=False, diff=b"", whole=False))
    return out


def _similar(index: DownstreamIndex, want: Counter[bytes]) -> tuple[str, float] | None:
    total = sum(want.values())
    if total < MIN_LINES:
        return None
    candidates: Counter[str] = Counter()
    for key, n in want.items():
        for sha in index.postings.get(key, ()):
            candidates[sha] += min(n, index.lines[sha][key])
    best: tuple[str, float] | None = None
    for sha, common in candidates.items():
        have = index.lines[sha]
        score = common / max(total, sum(have.values()))
        if score >= SIMILARITY and (best is None or score > best[1]):
            best = (sha, score)
    return best


def find_mirror(
    pr: PullRequest, index: DownstreamIndex, diffs: dict[str, UpstreamDiff], ids: dict[str, str], whole: bytes
) -> tuple[str, str] | None:
    """(how, downstream sha) when ``pr`` is carried downstream, else None.

    ``diffs``/``ids`` hold mapped diffs and patch-ids of upstream commits; ``whole`` is the PR's
    whole mapped diff, whose patch-id is ``ids["whole:" + merge_commit]``.
    """
    if pr.number in index.prs:
        return "trailer Upstream-PR", index.prs[pr.number]
    for sha in reversed(pr.commits):
        down = lookup_commit(index, sha)
        if down is not None:
            return ("same commit" if down == sha else "trailer Upstream-Commit/cherry-picked"), down
    pid = ids.get("whole:" + pr.merge_commit)
    if pid and pid in index.patch_ids:
        return "patch-id of the PR", index.patch_ids[pid]
    # Picked one by one: every non-merge commit with a diff has a downstream twin.
    own = [ids[s] for s in pr.commits if s in ids and s in diffs and not diffs[s].is_merge]
    if own and all(p in index.patch_ids for p in own):
        return "patch-id of each commit", index.patch_ids[own[-1]]
    want = line_keys(whole) if whole else None
    hit = _similar(index, want) if want is not None else None
    if hit:
        return f"similar content ({hit[1]:.0%} of changed lines)", hit[0]
    return None


def _feed(items: Iterable[tuple[str, bytes]]) -> bytes:
    return b"".join(b"commit " + key.encode() + b"\n" + text + b"\n" for key, text in items)


def mark_mirrored(
    upstream: Path,
    prs: Sequence[PullRequest],
    index: DownstreamIndex,
    path_map: Sequence[tuple[str, str]] = (),
    notes: list[str] | None = None,
    *,
    accept_similar: bool = False,
    transform: Transform | None = None,
) -> tuple[PullRequest, ...]:
    """``prs`` with a MIRRORED decision for those the downstream carries (others unchanged).
    ``notes`` gets a line when some PR's diff was over the bounds (matched by trailers only).

    Similar content only suggests: anyone who gets a PR merged upstream can add another pending
    PR's changed lines somewhere (dead code) and make it look carried. Such a PR stays as it was
    (applicable), its reason saying it looks mirrored, unless ``accept_similar``.

    ``transform`` (the carry's path map and translations) rewrites the upstream diffs as the
    carry would; without it, ``path_map`` alone."""
    pm = transform.path_map if transform is not None else PathMap(tuple(path_map))
    todo = [
        pr
        for pr in prs
        if pr.number not in index.prs and not any(lookup_commit(index, s) for s in pr.commits)
    ]
    diffs = upstream_diffs(upstream, (s for pr in todo for s in pr.commits), pm, transform)
    wholes: dict[str, bytes] = {}
    too_big = {pr.number for pr in todo if any(s in diffs and not diffs[s].whole for s in pr.commits)}
    for pr in todo:
        singles = [s for s in pr.commits if s in diffs and not diffs[s].is_merge]
        if pr.kind is PrKind.REBASE and len(singles) > 1:
            # One diff over the whole rebase-merged series, for a downstream that squashed it.
            args = [*BIG_FILES, "diff", "--no-renames", "--no-color", f"{pr.commits[0]}^", pr.merge_commit]
            try:
                diff = bounded(git.stream(upstream, args, deadline=CONTENT_SECONDS))
            except GitError:  # the series starts at the root commit: its per-commit ids still count
                continue
            if diff is not None and transform is not None:
                diff = transform.diff(map_paths(diff, pm), MAX_TRANSLATED_MATCHES)[0]
            elif diff is not None:
                diff = map_paths(diff, pm)
            if diff is None:
                too_big.add(pr.number)
            else:
                wholes[pr.merge_commit] = diff
        elif pr.merge_commit in diffs:
            wholes[pr.merge_commit] = diffs[pr.merge_commit].diff
    ids = patch_ids(upstream, _feed((sha, d.diff) for sha, d in diffs.items()))
    # Whole diffs under their own keys: the fake "commit" ids are only labels for patch-id.
    labels = {f"{i:040x}": m for i, m in enumerate(wholes, start=1)}
    for label, pid in patch_ids(upstream, _feed((lb, wholes[m]) for lb, m in labels.items())).items():
        ids["whole:" + labels[label]] = pid
    if too_big and notes is not None:
        shown = ", ".join(f"#{n}" for n in sorted(too_big)[:5]) + (", ..." if len(too_big) > 5 else "")
        notes.append(
            f"{len(too_big)} upstream PR(s) ({shown}) have a diff over {MAX_COMMIT_TEXT >> 20} MiB:"
            " only trailers can show them mirrored"
        )
    out = []
    for pr in prs:
        found = find_mirror(pr, index, diffs, ids, wholes.get(pr.merge_commit, b""))
        if found is None:
            out.append(pr)
            continue
        how, down = found
        if how.startswith("similar content") and not accept_similar:
            was = pr.decision or Decision(status=APPLICABLE, reason="")
            looks = f"{how} in {down[:12]}"
            why = f"looks mirrored ({looks}): not counted as carried without --accept-similar"
            reason = f"{was.reason}; {why}" if was.reason else why
            out.append(replace(pr, decision=replace(was, reason=reason, looks_mirrored=looks)))
            continue
        decision = Decision(
            status=MIRRORED, reason=f"already downstream: {how} in {down[:12]}", mirrored_by=how
        )
        out.append(replace(pr, decision=decision))
    return tuple(out)


def mark_direct_mirrored(directs: Sequence[DirectCommit], index: DownstreamIndex) -> tuple[DirectCommit, ...]:
    """``directs`` with ``mirrored_by`` set for those a downstream commit names (its
    ``Upstream-Commit:`` trailer, a ``cherry-pick -x`` line, or the same commit): a direct push
    carried by ``carry --direct include`` is then not carried again."""
    out = []
    for c in directs:
        down = lookup_commit(index, c.sha)
        if down is None:
            out.append(c)
            continue
        how = "same commit" if down == c.sha else "trailer Upstream-Commit/cherry-picked"
        out.append(replace(c, mirrored_by=f"{how} in {down[:12]}"))
    return tuple(out)
