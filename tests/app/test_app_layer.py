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
def test_a_request_is_frozen_and_each_use_case_takes_one(module: str) -> None:
    mod = importlib.import_module(f"vimesync.app.{module}")
    requests = [c for n, c in inspect.getmembers(mod, inspect.isclass) if n.endswith("Request")]
    assert requests, module
    for cls in requests:
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
    fn = getattr(mod, module)
    first = next(iter(inspect.signature(fn).parameters.values()))
    assert first.annotation.endswith("Request"), (module, first)  # postponed annotations: a name
