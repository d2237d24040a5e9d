"""Repositories for the git-safety tests (issue 7): an upstream and a downstream whose
attributes name a diff driver, and a downstream that commits a bare copy of the upstream with a
planted textconv (tests only)."""

from __future__ import annotations

from pathlib import Path

from tests.builders.gitrepo import Repo
from vimesync import git

F1 = "".join(f"line {i}\n" for i in range(30))
F2 = F1.replace("line 3\n", "line three\n")
F3 = F2.replace("line 20\n", "line twenty\n")
F4 = F3.replace("line 25\n", "line 25!\n")


def build_upstream(path: Path) -> tuple[Repo, str]:
    r = Repo(path)
    base = r.commit("init", {"f.txt": F1, ".gitattributes": "* diff=x\n"})
    r.commit("Change f (#1)", {"f.txt": F2})
    r.commit("Part a (#2)", {"f.txt": F3})
    r.commit("Part b (#2)", {"g.txt": F1})
    return r, base


def build_downstream(path: Path) -> tuple[Repo, str]:
    d = Repo(path)
    baseline = d.commit("import", {"f.txt": F1, ".gitattributes": "* diff=x\n"})
    d.commit("carry", {"f.txt": F4})
    return d, baseline


def plant_textconv(repo: Path, command: str) -> None:
    git.run(repo, ["config", "diff.x.textconv", command])
    gitdir = git.git_dir(repo)
    (gitdir / "info").mkdir(exist_ok=True)
    (gitdir / "info/attributes").write_text("* diff=x\n")


def embedded(tmp_path: Path, marker: Path) -> tuple[Path, Path, str]:
    """A downstream checkout that commits a bare copy of the upstream (with a planted textconv)."""
    up, base = build_upstream(tmp_path / "up")
    down, _ = build_downstream(tmp_path / "down")
    evil = down.path / "evil.git"
    git.run(tmp_path, ["clone", "-q", "--bare", str(up.path), str(evil)])
    plant_textconv(evil, f"touch '{marker}'; cat")
    down.git("add", "evil.git")
    down.git("commit", "-q", "-m", "add a repository as files")
    return down.path, up.path, base
