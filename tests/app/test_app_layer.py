"""The application layer's own rules: no printing, no exit, no typer or rich; every use case
returns a result that carries the JSON contract (vimesync/app/__init__.py)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

from vimesync.app.result import CONTRACT_KEYS, Kind

PACKAGE = Path(__file__).resolve().parents[2] / "vimesync"
MODULES = sorted(PACKAGE.glob("app/*.py")) + [PACKAGE / "demo" / "pipeline.py"]
USE_CASES = ("walk", "check", "lint", "bump", "init", "ci", "carry")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_printing_no_exit_no_cli_libraries(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            assert not any(n.split(".")[0] in ("typer", "rich", "click") for n in names), (path, names)
            assert not any(n.startswith("vimesync.cli") for n in names), (path, names)
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            assert name not in ("print", "exit", "_exit"), (path, ast.unparse(node))


@pytest.mark.parametrize("module", USE_CASES)
def test_every_result_carries_the_contract(module: str) -> None:
    mod = importlib.import_module(f"vimesync.app.{module}")
    results = [
        cls
        for _, cls in inspect.getmembers(mod, inspect.isclass)
        if cls.__module__ == mod.__name__
        and dataclasses.is_dataclass(cls)
        and hasattr(cls, "to_json")
        and any(f.name == "kind" for f in dataclasses.fields(cls))
    ]
    assert results, module
    for cls in results:
        assert dataclasses.fields(cls) and cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
        kind = next(f for f in dataclasses.fields(cls) if f.name == "kind").default
        assert isinstance(kind, Kind), cls
        assert all(hasattr(cls, a) for a in CONTRACT_KEYS), cls


@pytest.mark.parametrize("module", USE_CASES)
def test_each_use_case_takes_the_workspace_and_frozen_requests(module: str) -> None:
    """A use case receives the workspace (every fact of the sync resolved once) and what the
    flags say as frozen dataclasses: the flag groups (app/flags.py) or a request of its own."""
    from vimesync.app import flags

    mod = importlib.import_module(f"vimesync.app.{module}")
    fn = getattr(mod, module)
    params = list(inspect.signature(fn).parameters.values())
    groups = {n for n, c in inspect.getmembers(flags, inspect.isclass) if n.endswith("Flags")}
    own = {
        n
        for n, c in inspect.getmembers(mod, inspect.isclass)
        if c.__module__ == mod.__name__ and dataclasses.is_dataclass(c) and not hasattr(c, "to_json")
    }
    for cls in [getattr(mod, n) for n in own] + [getattr(flags, n) for n in groups]:
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
    takes = [p.annotation for p in params if p.kind is not p.KEYWORD_ONLY]  # postponed: names
    if module == "init":  # it makes a workspace: there is none before it
        assert takes == ["InitRequest"], takes
        return
    assert takes[0] == "Workspace", (module, takes)
    assert all(a in groups | own for a in takes[1:]), (module, takes)
