"""PR metadata (titles, labels, authors, files) from ``gh pr list --json`` output, and applying it.

``gh pr list --state merged --json number,title,labels,mergeCommit,files`` (``author`` too when
asked) gives a list of objects; ``--github`` produces the same records through
``vimesync.github``. Git stays authoritative for commits and changed paths; metadata
brings the real PR title, labels and author, and attributes first-parent commits that carry no
PR number (GitHub's "rebase and merge") to their PR through ``mergeCommit``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vimesync.config import read_text
from vimesync.errors import ConfigError
from vimesync.github import PRMeta
from vimesync.safefs import loads_json
from vimesync.upstream.model import DirectCommit, PrKind, PullRequest, WalkResult

MAX_METADATA_BYTES = 16 * 1024 * 1024  # gh pr list of thousands of PRs with their files fits well;
# 64 MiB of tiny JSON values held ~3 GB while parsing


def _name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("name", "login", "path", "oid"):
            if isinstance(item.get(key), str):
                return str(item[key])
    return None


def parse_metadata(data: Any, *, where: str = "<metadata>") -> dict[int, PRMeta]:
    """gh-style JSON (a list of PR objects) -> {number: PRMeta}."""
    if isinstance(data, dict) and isinstance(data.get("prs"), list):
        data = data["prs"]
    if not isinstance(data, list):
        raise ConfigError(where, "PR metadata must be a JSON list of PR objects (gh pr list --json …)")
    out: dict[int, PRMeta] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("number"), int):
            raise ConfigError(where, f"entry {i}: each PR needs an integer 'number'")
        labels = tuple(n for n in (_name(x) for x in item.get("labels") or []) if n)
        files = item.get("files")
        out[item["number"]] = PRMeta(
            number=item["number"],
            title=item.get("title") if isinstance(item.get("title"), str) else None,
            labels=labels,
            author=_name(item.get("author")),
            merge_commit=_name(item.get("mergeCommit")),
            files=tuple(n for n in (_name(f) for f in files) if n) if isinstance(files, list) else None,
        )
    return out


def load_metadata(path: Path) -> dict[int, PRMeta]:
    """Read a ``gh pr list --json`` file; ConfigError naming the file when it is not usable."""
    text = read_text(path, max_bytes=MAX_METADATA_BYTES)
    data = loads_json(text, where=str(path))  # bounded nesting and integers
    return parse_metadata(data, where=str(path))


def _enrich(pr: PullRequest, meta: PRMeta | None) -> PullRequest:
    if meta is None:
        return pr
    return replace(
        pr,
        title=meta.title or pr.title,
        labels=meta.labels or pr.labels,
        author=meta.author or pr.author,
    )


def apply_metadata(result: WalkResult, metas: Mapping[int, PRMeta]) -> WalkResult:
    """Enrich PRs with metadata; turn direct commits that are a known PR's merge commit into that PR."""
    by_merge = {m.merge_commit: m for m in metas.values() if m.merge_commit}
    known = {pr.number for pr in result.prs}
    prs = [_enrich(pr, metas.get(pr.number)) for pr in result.prs]
    directs: list[DirectCommit] = []
    order = {pr.merge_commit: i for i, pr in enumerate(result.prs)}
    promoted: list[tuple[DirectCommit, PRMeta]] = []
    for d in result.direct_commits:
        meta = by_merge.get(d.sha)
        if meta is not None and meta.number not in known:
            promoted.append((d, meta))
        else:
            directs.append(d)
    if promoted:
        for d, meta in promoted:
            pr = PullRequest(
                number=meta.number,
                title=meta.title or d.title,
                commits=(*d.side_commits, d.sha),
                paths=d.paths,
                merge_commit=d.sha,
                kind=PrKind.MERGE if d.side_commits else PrKind.REBASE,
                labels=meta.labels,
                author=meta.author or "",
                reverts=d.reverts,
            )
            prs.append(pr)
        # Keep merge order: the position of each landing commit on the first-parent line.
        line = {sha: i for i, sha in enumerate(result.first_parents)}
        prs.sort(key=lambda p: line.get(p.merge_commit, order.get(p.merge_commit, 0)))
    return replace(result, prs=tuple(prs), direct_commits=tuple(directs))
