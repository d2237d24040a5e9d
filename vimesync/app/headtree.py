"""The repository content a commit holds, read from that commit, never from the working tree.

What a command reports *about a head* (its series, patches, pins, policy, gates) is what the head
commit holds: an uncommitted ``patches/series`` must not make the report of a 14-patch head say
"All 1 patch apply". :func:`head_config` copies the head's tree, through git objects only (no
checkout: no filter, attribute or hook runs), into a scratch folder and loads the config from
there. Locations the config names (``[upstream] path``, ``[downstream] path``, an engine
``source``) stay where the checkout's config puts them: they are places on this machine, not
content of the commit.

The review ledgers and the evidence records are not taken from the head: each entry is bound to
what it vouches for (a review to a blob id, an image to a head sha), so reading them from the
checkout cannot make a claim about other content, and a review written a moment ago counts before
it is committed. ``sop/gates.toml`` is read from the checkout too: it says what the maintainer
(or, in CI, only ``--skip-gate``) asks to be checked, not what the head holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from vimesync import git, nofollow
from vimesync.config import Config, EnginePin, load_config
from vimesync.errors import BadInput
from vimesync.patches.model import MAX_PATCH_BYTES
from vimesync.safefs import lexical, remove_tree

MAX_FILE_BYTES = MAX_PATCH_BYTES  # a larger blob is no config, pin, series or patch: not copied
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_FILES = 200_000


@dataclass(frozen=True)
class HeadTree:
    """The head's files, standing in for the checkout ``real``: under ``base`` (a scratch folder)
    at the checkout's own absolute path, so that a location the config names relative to itself
    (``../vllm.git``) lands at ``base`` + the place it names, and comes back by dropping ``base``."""

    base: Path
    real: Path
    commit: str

    @property
    def root(self) -> Path:
        return self.base / self.real.relative_to(self.real.anchor)

    def relocate(self, path: Path | None) -> Path | None:
        """A path under the copy as the same path on this machine (locations, messages)."""
        if path is None:
            return None
        here = lexical(path)
        return (
            Path(self.real.anchor) / here.relative_to(self.base) if here.is_relative_to(self.base) else path
        )

    def in_checkout(self, text: str) -> str:
        """``text`` (an error message) naming files of the copy where the checkout has them."""
        return text.replace(str(self.base), "")


def _plain(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not any(p in ("", ".", "..") or p.casefold() == ".git" for p in parts)


def copy_tree(repo: Path, commit: str, into: Path) -> None:
    """Every blob and symlink of ``commit`` under ``into`` (bounded; submodules and blobs over
    :data:`MAX_FILE_BYTES` left out; never writing through a symlink)."""
    entries = [e for e in git.ls_tree(repo, commit) if e.kind == "blob" and _plain(e.path)]
    if len(entries) > MAX_FILES:
        raise BadInput(f"{commit[:12]} holds {len(entries):,} files, more than the {MAX_FILES:,} read")
    wanted = [e for e in entries if 0 <= e.size <= MAX_FILE_BYTES]
    total = sum(e.size for e in wanted)
    if total > MAX_TOTAL_BYTES:
        raise BadInput(
            f"{commit[:12]}: its files hold {total:,} bytes, more than the {MAX_TOTAL_BYTES:,} read"
        )
    by_oid: dict[str, list[git.TreeEntry]] = {}
    for e in wanted:
        by_oid.setdefault(e.oid, []).append(e)
    for oid, data in git.cat_blobs(repo, list(by_oid)):
        for e in by_oid[oid]:
            try:
                if e.mode == git.MODE_LINK:
                    nofollow.symlink_new(into, e.path, data)
                else:
                    nofollow.write_new(into, e.path, data, executable=e.mode == git.MODE_EXEC)
            except (nofollow.NotInTree, FileExistsError):
                continue  # a path below a symlink of the same tree: git would not check it out either


def config_path_in(real_config: Path, work_tree: Path) -> str | None:
    """The config's path relative to the checkout, or None when it lies outside it."""
    here = lexical(real_config)
    root = lexical(work_tree)
    return here.relative_to(root).as_posix() if here.is_relative_to(root) else None


def _relocated_pin(pin: EnginePin, tree: HeadTree) -> EnginePin:
    origin = pin.source_origin
    return replace(
        pin,
        # Its values were read from the head; its file is named as the checkout's, so that what
        # asks for "this pin as committed at the baseline" finds it (the series stays the head's).
        file=tree.relocate(pin.file),
        source=tree.relocate(pin.source),
        source_origin=(tree.relocate(origin[0]) or origin[0], origin[1]) if origin else None,
    )


def relocate_config(cfg: Config, tree: HeadTree) -> Config:
    """``cfg`` (loaded from the snapshot) with its locations back in the checkout."""
    return replace(
        cfg,
        upstream_path=tree.relocate(cfg.upstream_path),
        downstream_path=tree.relocate(cfg.downstream_path),
        upstream_pin=replace(cfg.upstream_pin, file=tree.relocate(cfg.upstream_pin.file)),
        engine=_relocated_pin(cfg.engine, tree),
        engines=tuple(_relocated_pin(p, tree) for p in cfg.engines),
        path_origins=tuple((name, tree.relocate(file) or file, key) for name, file, key in cfg.path_origins),
    )


@contextmanager
def head_config(
    checkout_config: Config, downstream: Path, head: str
) -> Iterator[tuple[Config, str | None, HeadTree | None]]:
    """The config as committed at ``head`` (a full sha), a note when it is not read from the head
    (no config there, or the config lies outside the downstream: then the checkout's), and the
    copy of the head's tree it was read from."""
    work_tree = lexical(downstream)
    real = checkout_config.file
    rel = config_path_in(real, work_tree) if real is not None else None
    if real is None or rel is None:
        yield checkout_config, None, None
        return
    scratch = Path(os.path.realpath(_mkdtemp()))
    try:
        tree = HeadTree(base=scratch, real=work_tree, commit=head)
        tree.root.mkdir(parents=True)
        copy_tree(downstream, head, tree.root)
        snap = tree.root / rel
        if not os.path.lexists(snap):
            yield checkout_config, f"{rel} is not in {head[:12]}: the checkout's config was read", None
            return
        yield relocate_config(load_config(snap), tree), None, tree
    finally:
        remove_tree(scratch)


def _mkdtemp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="vimesync-head-")
