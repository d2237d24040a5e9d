"""The option aliases as a package (vimesync/cli/options/): one module per concept, the package's
names the only way in, and a module imported only when a command names one of its aliases."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import vimesync.cli.options as options

PACKAGE = Path(options.__file__).parent
ROOT = PACKAGE.parents[2]


def _public_names(path: Path) -> set[str]:
    """The top-level aliases, classes and functions a module defines (not its private helpers)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
    return {n for n in names if not n.startswith("_")}


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PACKAGE.glob("*.py")) if p.name != "__init__.py"}


def test_every_alias_is_in_one_module_and_the_package_names_it_there() -> None:
    where: dict[str, str] = {}
    for module, path in _modules().items():
        for name in _public_names(path):
            assert name not in where, f"{name} in {where[name]} and {module}"
            where[name] = module
    assert len(where) > 100
    assert options._MODULE_OF == where
    assert sorted(options.__all__) == sorted(where)


def test_the_type_checkers_read_every_module() -> None:
    """mypy reads the ``if TYPE_CHECKING:`` star imports, one per module; a run reads ``_NAMES``."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If))
    starred = [
        node.module.rsplit(".", 1)[1]
        for node in guarded.body
        if isinstance(node, ast.ImportFrom) and node.module and [a.name for a in node.names] == ["*"]
    ]
    assert len(starred) == len(guarded.body)
    assert sorted(starred) == sorted(_modules()) == sorted(options._NAMES)


def test_every_name_resolves_to_its_modules_object() -> None:
    import importlib

    for name, module in options._MODULE_OF.items():
        held = getattr(importlib.import_module(f"vimesync.cli.options.{module}"), name)
        assert getattr(options, name) is held, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchOpt"):
        options.NoSuchOpt  # noqa: B018
    with pytest.raises(ImportError):
        exec("from vimesync.cli.options import NoSuchOpt", {})


@pytest.mark.parametrize(
    "command, expected",
    [
        ("walk", {"formats", "synccontext"}),
        ("carry", {"carrying", "formats", "synccontext"}),
        ("sop", {"containers", "formats", "headevidence", "patchstack", "synccontext"}),
    ],
)
def test_a_command_module_imports_only_the_modules_it_names(command: str, expected: set[str]) -> None:
    """Start-up: ``vimesync walk`` does not pay for the aliases of ``sop``'s records (its tree
    built as a run naming it builds it: the flag groups name their aliases then)."""
    code = (
        f"import sys, typer.main, vimesync.cli.app as a; typer.main.get_command(a.build_app({command!r})); "
        "print(' '.join(sorted(m.rsplit('.', 1)[1] for m in sys.modules "
        "if m.startswith('vimesync.cli.options.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert set(out.split()) == expected
