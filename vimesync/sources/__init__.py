"""Pinned engine sources: a git repository at a commit, a plain directory, or an archive.

A :class:`Source` lists its files and hands out their bytes; it is never modified. The caller
applies patches lazily: it materializes only the files a patch touches (``export(dest, only=...)``)
and parses the rest in place (``python_files()`` + ``read_many`` as the parser's loader).

- git (work tree or bare mirror): read only through objects (``ls-tree`` + ``cat-file --batch``),
  never the work tree, index or refs; blob ids double as free content hashes for the parse cache.
- directory: read in place; ``.git`` entries are ignored, symlinks are listed, never followed.
- archive (``vimesync.sources.archive``): ``.whl``/``.zip`` are read member by member; tarballs (sdists)
  are unpacked once into a private scratch directory. Member names and link targets are validated
  and sizes capped before anything is written.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

from vimesync import git
from vimesync.errors import BadInput, GitError
from vimesync.safefs import pseudo_area
from vimesync.sources import archive
from vimesync.sources.directory import DirectorySource
from vimesync.sources.gitsource import GitSource
from vimesync.sources.model import Entry, Limits, Source, SourceInfo

__all__ = ["Entry", "Limits", "Source", "SourceInfo", "open_source"]


def open_source(
    path: Path, rev: str | None = None, *, scratch: Path | None = None, limits: Limits | None = None
) -> Source:
    """Open a pinned source, detecting its kind; ``rev`` (any commit-ish) is for git sources only.

    Archives that must be unpacked go into a fresh folder under ``scratch`` (default: the system
    temp dir), removed by ``close()``. Raises BadInput/GitError with a message naming the problem.
    """
    limits = limits or Limits()
    area = pseudo_area(path, os.path.realpath(path))
    if area is not None:
        raise BadInput(f"{path}: refusing a source under {area}: not a source tree")
    if not path.exists() and not path.is_symlink():
        raise BadInput(f"{path}: no such file or directory")
    if path.is_dir():
        if git.repo_at(path) is not None:
            return GitSource(path, rev)
        if rev is not None:
            raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
        return DirectorySource(path, max_files=limits.max_members)
    if rev is not None:
        raise GitError(f"{path}: a revision ({rev!r}) was given but this is not a git repository")
    if not path.is_file():
        raise BadInput(f"{path}: not a git repository, a directory or an archive")
    lower = path.name.lower()
    if lower.endswith(archive.ZIP_SUFFIXES):
        return archive.ZipSource(path, limits)
    if lower.endswith(archive.TAR_SUFFIXES):
        return archive.TarSource(path, limits, scratch)
    # An unusual name: trust the content.
    if zipfile.is_zipfile(path):
        return archive.ZipSource(path, limits)
    try:
        is_tar = tarfile.is_tarfile(path)
    except OSError:
        is_tar = False
    if is_tar:
        return archive.TarSource(path, limits, scratch)
    raise BadInput(
        f"{path}: not a git repository, a directory or an archive (.whl, .zip, .tar.gz, .tgz, .tar)"
    )
