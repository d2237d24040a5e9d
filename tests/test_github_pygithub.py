"""The PyGithub adapter (vimesync/github/pygithub.py) is pinned to the PyGithub it was checked
against, uses only hooks that exist, swaps nothing process-wide, and is the only importer of PyGithub."""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

from packaging.version import Version

from vimesync.github import GitHubClient
from vimesync.github.pygithub import CHECKED_AGAINST, missing_hooks
from vimesync.settings import GitHubSettings

PACKAGE = Path(__file__).resolve().parents[1] / "vimesync"


def test_the_installed_pygithub_is_the_one_the_adapter_was_checked_against() -> None:
    installed = Version(version("PyGithub"))
    assert installed.release[:2] <= Version(CHECKED_AGAINST).release[:2], (
        f"PyGithub {installed} is newer than {CHECKED_AGAINST}: re-read vimesync/github/pygithub.py's hooks "
        "against it (Github's arguments, Requester.requestJson(cnx=), what it calls on a connection), then "
        "raise CHECKED_AGAINST"
    )


def test_every_hook_the_adapter_relies_on_exists() -> None:
    assert missing_hooks() == []


def test_no_connection_class_is_swapped_process_wide(tmp_path: Path) -> None:
    from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester

    GitHubClient("a/b", GitHubSettings(api="http://127.0.0.1:9", cache=tmp_path)).close()
    assert Requester._Requester__httpConnectionClass is HTTPRequestsConnectionClass
    assert Requester._Requester__httpsConnectionClass is HTTPSRequestsConnectionClass


def test_only_the_adapter_imports_pygithub() -> None:
    importers = set()
    for path in PACKAGE.rglob("*.py"):
        if "demo/data" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(n == "github" or n.startswith("github.") for n in names):
                importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {"github/pygithub.py"}
