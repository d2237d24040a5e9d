"""Which repository paths to trust: flags from the CI job over paths named by repository content.

A pull request controls every file of the checkout, so it can commit a whole repository as
ordinary files (``evil.git/config``, ``evil.git/objects/…``) and point ``[upstream] path``,
``[downstream] path`` or an ``[engine] source`` at it. Such a path is refused when it lies inside
the downstream work tree (the git top level holding the config) and is not that work tree
itself; a config outside any work tree has no checkout to protect. A flag (``--upstream``,
``--downstream``, ``--source``) comes from the job, is trusted, and wins over the file anyway.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.config import Config
from vimesync.errors import ConfigError

RepoField = Literal["upstream_path", "downstream_path", "engine_source"]

_FLAGS = {"upstream_path": "--upstream", "downstream_path": "--downstream", "engine_source": "--source"}


def repository_path(flag: Path | None, config: Config, name: RepoField) -> Path | None:
    """``flag`` when given; else the config's path, checked when a file named it."""
    if flag is not None:
        return flag
    path = config.engine.source if name == "engine_source" else getattr(config, name)
    if path is None:
        return None
    origin = next(((file, key) for field, file, key in config.path_origins if field == name), None)
    if origin is not None:
        _check_not_embedded(path, name, *origin)
    return path


def _check_not_embedded(path: Path, name: RepoField, file: Path, key: str) -> None:
    root = work_tree_of(file.parent.resolve())
    real = path.resolve()
    if root is None or real == root or not real.is_relative_to(root):
        return
    # An engine source may be a plain folder or an archive of the checkout: only a repository,
    # which git would read with the repository's own config, is refused there.
    if name == "engine_source" and not _looks_like_repository(real):
        return
    raise ConfigError(
        str(file),
        f"{key} names a repository inside the downstream work tree {root}, which is not the downstream "
        "itself: a repository committed as files is content a pull request controls",
        hint=f"pass {_FLAGS[name]} PATH on the command line if the job really means that repository",
    )


@lru_cache(maxsize=16)
def work_tree_of(folder: Path) -> Path | None:
    """The top level of the git work tree holding ``folder``; None outside any work tree (a
    config kept beside the repositories it names, as on a maintainer's machine)."""
    code, out, _ = git.run_status(folder, ["rev-parse", "--show-toplevel"])
    top = out.decode("utf-8", "surrogateescape").strip()
    return Path(top).resolve() if code == 0 and top else None


def _looks_like_repository(path: Path) -> bool:
    # What git's own discovery accepts: a .git entry, or a bare layout (HEAD, objects/, refs/).
    try:
        if (path / ".git").exists():
            return True
        return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()
    except OSError:
        return False
