"""Which locations to trust: flags from the job over locations named by repository content.

A location is a repository or engine source path: ``[upstream] path``, ``[downstream] path``,
``[engine] source`` (config or pin). A pull request controls every file of the checkout, so it
can commit a whole repository as ordinary files (``evil.git/config``) or a symlink, and point a
location at them, or at anything on the machine. So, for a location named by a file:

- it may not reach through a symlink inside the checkout (it is checked component by component,
  never resolved), nor lie under ``/proc``, ``/dev`` or ``/sys``;
- inside the checkout, it may not be a repository other than the checkout itself (a repository
  committed as files would be read with its own config);
- in an untrusted checkout (CI: ``Settings.untrusted``, from the job's environment) it must lie
  inside the checkout:
  a location elsewhere on the runner comes from the job, as a flag, or not at all.

A flag (``--upstream``, ``--downstream``, ``--source``) comes from the job and wins over any file;
it is only refused under a pseudo file system.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.config import Config, EnginePin
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import lexical, pseudo_area
from vimesync.settings import UNTRUSTED_ENV

RepoField = Literal["upstream_path", "downstream_path", "engine_source"]

_FLAGS = {"upstream_path": "--upstream", "downstream_path": "--downstream", "engine_source": "--source"}


def repository_path(flag: Path | None, config: Config, name: RepoField, *, untrusted: bool) -> Path | None:
    """``flag`` when given; else the config's location, checked when a file named it (and, in an
    untrusted checkout, kept inside it)."""
    if flag is not None:
        _check_not_pseudo(flag, what=_FLAGS[name])
        return flag
    path = config.engine.source if name == "engine_source" else getattr(config, name)
    if path is None:
        return None
    origin = next(((file, key) for field, file, key in config.path_origins if field == name), None)
    if origin is None:
        _check_not_pseudo(path, what=name)
        return path
    file, key = origin
    _check_named_location(path, name, file, key, untrusted=untrusted)
    return path


def engine_source(flag: Path | None, pin: EnginePin, *, untrusted: bool) -> Path | None:
    """``flag`` when given; else the engine pin's ``source``, checked like any location a file names."""
    if flag is not None:
        _check_not_pseudo(flag, what="--source")
        return flag
    if pin.source is None:
        return None
    if pin.source_origin is None:
        _check_not_pseudo(pin.source, what="engine_source")
        return pin.source
    file, key = pin.source_origin
    _check_named_location(pin.source, "engine_source", file, key, untrusted=untrusted)
    return pin.source


def file_named_source(path: Path, file: Path, key: str, *, untrusted: bool) -> Path:
    """An engine source named by a file other than the config or a pin (``bump.json``'s ``to``,
    which ``pin bump --refresh`` writes into the checkout, where a pull request can write it too):
    checked as ``[engine] source`` is (no pseudo file system, no symlink or committed repository
    inside the checkout, inside it in an untrusted checkout)."""
    _check_named_location(path, "engine_source", file, key, untrusted=untrusted)
    return path


def _check_not_pseudo(path: Path, *, what: str, file: Path | None = None) -> None:
    area = pseudo_area(lexical(path))
    if area is None:
        try:
            area = pseudo_area(os.path.realpath(path))
        except OSError:  # a link it may not read (/proc/1/root): no source either
            area = "a link it may not follow"
    if area is None:
        return
    message = f"{what} names {path}, under {area}: not a repository or source tree"
    raise ConfigError(str(file), message) if file is not None else BadInput(message)


def _check_named_location(path: Path, name: RepoField, file: Path, key: str, *, untrusted: bool) -> None:
    _check_not_pseudo(path, what=key, file=file)
    here = lexical(path)
    root = work_tree_of(lexical(file).parent)
    inside = root is not None and (here == root or here.is_relative_to(root))
    if root is not None and inside:
        _check_no_symlink(here, root, file, key)
    elif untrusted:
        raise ConfigError(
            str(file),
            f"{key} names {path}, outside the checkout {root or '(none found above the file)'}; in an "
            "untrusted checkout (CI) a location outside it comes only from the job",
            hint=f"pass {_FLAGS[name]} PATH on the command line (or set {UNTRUSTED_ENV}=0 in a job "
            "that only runs on trusted refs)",
        )
    if not inside or here == root:
        return
    # An engine source may be a plain folder or an archive of the checkout: only a repository,
    # which git would read with the repository's own config, is refused there.
    if name == "engine_source" and not _looks_like_repository(here):
        return
    raise ConfigError(
        str(file),
        f"{key} names a repository inside the downstream work tree {root}, which is not the downstream "
        "itself: a repository committed as files is content a pull request controls",
        hint=f"pass {_FLAGS[name]} PATH on the command line if the job really means that repository",
    )


def _check_no_symlink(here: Path, root: Path, file: Path, key: str) -> None:
    """Refuse a location that reaches through a symlink below the checkout's root."""
    walked = root
    for part in here.relative_to(root).parts:
        walked = walked / part
        if walked.is_symlink():
            raise ConfigError(
                str(file),
                f"{key} reaches through {walked}, a symbolic link inside the checkout {root}; "
                "refusing to follow it",
            )


def work_tree_of(folder: Path) -> Path | None:
    """The checkout holding ``folder``: its innermost ancestor with a ``.git`` entry, or None.

    Judged from the file system, never by running git in ``folder``: a pull request controls
    every folder of the checkout and can make one look like a bare repository (or break git
    there), but git refuses to track a ``.git`` entry, so it cannot plant one."""
    for anc in (folder, *folder.parents):
        if os.path.lexists(anc / ".git"):
            return anc
    return None


def _looks_like_repository(path: Path) -> bool:
    """What git's discovery could take for a repository, judged without following a symlink (a
    committed ``HEAD`` may be one): a ``.git`` entry, or any of a git directory's own files."""
    try:
        if any(os.path.lexists(path / n) for n in (".git", "HEAD", "commondir", "gitdir", "objects")):
            return True
    except OSError:
        return True
    return git.repo_at(path) is not None
