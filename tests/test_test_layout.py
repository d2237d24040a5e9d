"""The tests' own layout, a rule of docs/ARCHITECTURE.md: shared builders live in ``tests/builders``,
and no test module or conftest imports from another test module, so each one can be read and run alone."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BUILDERS = TESTS / "builders"


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def imports_of_tests(path: Path) -> list[tuple[int, str]]:
    """Every import of a ``tests`` module in ``path`` (lazy ones in functions too), as (line, module);
    a relative import is named by its dots."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "tests"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node.lineno, "." * node.level + (node.module or "")))
            elif node.module and node.module.split(".")[0] == "tests":
                names = [a.name for a in node.names] if node.module == "tests" else [""]
                found += [(node.lineno, f"{node.module}.{n}".rstrip(".")) for n in names]
    return found


def outside_builders(module: str) -> bool:
    return not (module == "tests.builders" or module.startswith("tests.builders."))


def test_only_builders_are_imported_from_tests() -> None:
    wrong = [
        f"{path.relative_to(TESTS.parent)}:{line}: imports {module}"
        for path in python_files()
        for line, module in imports_of_tests(path)
        if outside_builders(module)
    ]
    assert wrong == [], "import shared helpers from tests.builders:\n" + "\n".join(wrong)


def test_every_helper_module_is_a_builder() -> None:
    """Outside tests/builders a module is a test module, a conftest or a package marker: a helper
    anywhere else would be imported from a test folder."""
    allowed = ("conftest.py", "__init__.py")
    strays = [
        str(p.relative_to(TESTS.parent))
        for p in python_files()
        if BUILDERS not in p.parents and not p.name.startswith("test_") and p.name not in allowed
    ]
    assert strays == []


def test_the_check_sees_what_it_refuses(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "from tests.builders.gitrepo import Repo\n"
        "from tests.builders import samples\n"
        "from tests.check.test_run import Stack\n"
        "from tests import fakegithub\n"
        "from . import helper\n"
        "def f():\n    import tests.cli.hostile\n"
    )
    modules = [m for _, m in imports_of_tests(sample)]
    assert modules == [
        "tests.builders.gitrepo",
        "tests.builders",
        "tests.check.test_run",
        "tests.fakegithub",
        ".",
        "tests.cli.hostile",
    ]
    assert [outside_builders(m) for m in modules] == [False, False, True, True, True, True]
