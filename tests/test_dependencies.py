"""Every declared dependency is used on purpose: the package imports each runtime one, and the
README's Dependencies table gives each declared one (runtime and extras) a reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import vimesync
from tests.builders.toml import tomllib

ROOT = Path(__file__).resolve().parent.parent
IMPORT_NAME = {"pygithub": "github", "google-re2": "re2"}  # distribution -> top-level module


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower()


def _imported() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "vimesync").rglob("*.py"):
        if "demo/data" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


@pytest.mark.slow
def test_every_runtime_dependency_is_imported() -> None:
    imported = _imported()
    unused = [r for r in _project()["dependencies"] if IMPORT_NAME.get(_name(r), _name(r)) not in imported]
    assert unused == []


def test_every_declared_dependency_has_a_reason_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Dependencies") :].split("\n## ", 1)[0]
    named = {m.lower() for m in re.findall(r"`([A-Za-z0-9_.-]+)`", table)}
    project = _project()
    declared = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    missing = {_name(r) for r in declared if _name(r) != "vimesync"} - named
    assert missing == set()


def test_the_version_has_one_source() -> None:
    project = _project()
    assert "version" not in project and "version" in project["dynamic"]
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["dynamic"]["version"] == {"attr": "vimesync.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", vimesync.__version__)
