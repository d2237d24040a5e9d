"""First-parent walk of an upstream range ``BASE..TIP`` into merged PRs and direct commits.

One streamed ``git log --first-parent`` gives every first-parent commit with its message and
changed paths (merges diffed against their first parent); one ``git rev-list --parents`` of
the range, only when the first-parent line carries merges, tells which side commits each
merge brought in. Nothing walks git objects one by one.

The log is parsed by :mod:`~vimesync.upstream.logparse`, the commits attributed to PRs by
:mod:`~vimesync.upstream.attribution` (what a message says: :mod:`~vimesync.upstream.messages`);
``Revert "…"`` commits (PRs or direct) are linked to the PR they revert when it can be found.
This module is the git side: the range checked, the graph read, the walk.
"""

from __future__ import annotations

import threading
from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput, GitError
from vimesync.upstream.attribution import attribute, owned_side_commits
from vimesync.upstream.logparse import FirstParent, log_args, parse_log
from vimesync.upstream.model import WalkResult


def _range_graph(repo: Path, base: str | None, tip: str) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    args = ["rev-list", "--topo-order", "--reverse", "--parents", tip] + ([f"^{base}"] if base else [])
    graph: dict[str, tuple[str, ...]] = {}
    order: dict[str, int] = {}
    for i, line in enumerate(git.run(repo, args).decode().splitlines()):
        ids = line.split()
        graph[ids[0]] = tuple(ids[1:])
        order[ids[0]] = i
    return graph, order


class _RangeGraph:
    """:func:`_range_graph` on a helper thread (git does the work; the thread only waits and
    splits lines), so that it overlaps the first-parent log; :meth:`result` joins it and
    re-raises what it raised."""

    def __init__(self, repo: Path, base: str | None, tip: str) -> None:
        self._out: tuple[dict[str, tuple[str, ...]], dict[str, int]] | None = None
        self._exc: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(repo, base, tip), name="vimesync-range-graph", daemon=True
        )
        self._thread.start()

    def _run(self, repo: Path, base: str | None, tip: str) -> None:
        try:
            self._out = _range_graph(repo, base, tip)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._exc = exc

    def result(self) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        assert self._out is not None
        return self._out


def check_range(
    repo: Path, base: str | None, tip: str, *, tip_sha: str | None = None
) -> tuple[str | None, str, bool]:
    """Resolve and validate a range: (base sha or None for the root, tip sha, empty?).
    ``tip_sha``: what ``tip`` resolved to, when the caller has just asked git.

    Only BASE == TIP is empty. BadInput when BASE is not an ancestor of TIP: a reversed range
    (TIP an ancestor of BASE) says so; otherwise it says what git's ``BASE..TIP`` would walk.
    """
    try:
        tip_sha = tip_sha or git.resolve(repo, tip)
    except GitError:
        git.git_dir(repo)  # not a repository (or refused) says so first, as before
        raise
    # (A tip that resolves is in a repository: no separate git_dir query, one git process less.)
    if not base or base == git.NULL_SHA:
        return None, tip_sha, False
    base_sha = git.resolve(repo, base)
    if base_sha == tip_sha:
        return base_sha, tip_sha, True
    if git.is_ancestor(repo, base_sha, tip_sha):
        return base_sha, tip_sha, False
    if git.is_ancestor(repo, tip_sha, base_sha):
        # git would walk nothing, but "nothing to sync" would hide a swapped range.
        raise BadInput(
            f"TIP {tip} ({tip_sha[:12]}) is an ancestor of BASE {base} ({base_sha[:12]}): "
            f"the range is reversed; did you mean {tip}..{base}?",
            hint=(
                "BASE is the last-synced (older) commit, TIP the newer one; "
                "if TIP is a branch, the clone may need a fetch"
            ),
        )
    out = git.run(repo, ["merge-base", base_sha, tip_sha], check=False).decode().split()
    what = (
        f"{base} ({base_sha[:12]}) is not an ancestor of {tip} ({tip_sha[:12]}): {tip}'s history does not "
        f"contain {base}, so {base}..{tip} is not 'the commits since {base}' (was upstream rewritten, or is "
        "the recorded sync point on another branch or from another repository?)"
    )
    if not out:
        raise BadInput(what, hint=f"{base} and {tip} share no history at all; nothing sensible can be walked")
    mb = out[0]
    count = git.run(repo, ["rev-list", "--first-parent", "--count", tip_sha, f"^{mb}"]).decode().strip()
    subject = git.run(repo, ["log", "-1", "--format=%s", mb]).decode().strip()
    raise BadInput(
        what,
        hint=(
            f"git's {base}..{tip} means the {count} first-parent commits since their merge-base "
            f"{mb[:12]} ({subject!r}); nothing was walked. To walk exactly those: --range {mb[:12]}..{tip}"
        ),
    )


class _Subjects:
    """Subjects of commits outside the range, read on demand through one ``git cat-file --batch``."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._cat: git.CatFile | None = None

    def __call__(self, sha: str) -> str | None:
        if self._cat is None:
            self._cat = git.CatFile(self.repo)
        try:
            raw = self._cat.read(sha)
        except (GitError, IndexError, ValueError):  # unknown or ambiguous (short) sha
            return None
        _, _, message = raw.partition(b"\n\n")
        return message.decode("utf-8", "replace").partition("\n")[0].strip() or None

    def __enter__(self) -> _Subjects:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cat is not None:
            self._cat.close()


def walk(repo: Path, base: str | None, tip: str, *, tip_sha: str | None = None) -> WalkResult:
    """Walk ``base..tip`` of ``repo`` (a clone or bare mirror) into PRs and direct commits.

    ``base`` None (or the null sha) walks TIP's whole history down to the root commit. The
    result has no decisions yet. BASE == TIP gives an empty result; BASE not an ancestor of TIP
    (a reversed range included) is BadInput. ``tip_sha``: TIP already resolved by the caller.
    """
    base_sha, tip_sha, empty = check_range(repo, base, tip, tip_sha=tip_sha)
    base_out = base_sha or git.NULL_SHA
    if empty:
        return WalkResult(base=base_out, tip=tip_sha, prs=(), direct_commits=())
    first_parents: list[FirstParent] = []
    graph_reader: _RangeGraph | None = None
    for fp in parse_log(git.stream(repo, log_args(base_sha, tip_sha))):
        first_parents.append(fp)
        if graph_reader is None and len(fp.commit.parents) > 1:
            # The first merge seen: read the graph while the rest of the log streams.
            graph_reader = _RangeGraph(repo, base_sha, tip_sha)
    first_parents.reverse()  # oldest first
    owned: dict[str, tuple[str, ...]] = {}
    if graph_reader is not None:
        graph, order = graph_reader.result()
        owned = owned_side_commits(first_parents, graph, order)
    with _Subjects(repo) as subjects:
        prs, directs = attribute(first_parents, owned, subjects)
    return WalkResult(
        base=base_out,
        tip=tip_sha,
        prs=tuple(prs),
        direct_commits=tuple(directs),
        first_parents=tuple(fp.commit.sha for fp in first_parents),
    )
