"""docs/ARCHITECTURE.md checked against the code, as tests/test_layers.py checks the layers: the page
names every package and every top-level module of vimesync, its table lists them in the layer
order, and every path, module and test it names exists.

The one spelling: code is named in backticks by its path from the repository's root —
`vimesync/carry/` for a package (a folder with an ``__init__.py``; ``vimesync/demo/data/`` holds data,
not packages), `vimesync/settings.py` for a module, `tests/test_layers.py::test_no_import_cycles` for
a test — or by its dotted name, `vimesync.cli.options`. In a row of the packages table, a bare
`model.py` is that row's package's module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from tests.builders.toml import tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = "docs/ARCHITECTURE.md"
SPAN = re.compile(r"`([^`\n]+)`")
ROOTS = ("vimesync/", "tests/", "bench/", "docs/")
ROW = re.compile(r"^\| `(vimesync/[^`]+)` \|", re.M)  # a row of the packages table


def _spans(doc: str) -> list[str]:
    return SPAN.findall(doc)


def code_units(root: Path) -> list[str]:
    """Every package (``vimesync/x/``) and top-level module (``vimesync/x.py``) under ``root``."""
    package = root / "vimesync"
    units = [
        f"{p.parent.relative_to(root).as_posix()}/"
        for p in package.rglob("__init__.py")
        if p.parent != package and "demo/data" not in p.as_posix()
    ]
    units += [p.relative_to(root).as_posix() for p in package.glob("*.py") if p.name != "__init__.py"]
    return sorted(units)


def unnamed(doc: str, root: Path) -> list[str]:
    """The packages and top-level modules the page does not name."""
    named = set(_spans(doc))
    return [unit for unit in code_units(root) if unit not in named]


def _defines(path: Path, name: str) -> bool:
    """``name`` is a function, class or variable at the top of the module at ``path``."""
    body = ast.parse(path.read_bytes(), str(path)).body
    names = {n.name for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    names |= {t.id for n in body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    names |= {n.target.id for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return name in names


def _dotted_exists(name: str, root: Path) -> bool:
    """``vimesync.a.b`` is a module or package, or ``b`` is defined at the top of module ``vimesync.a``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:i])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.is_file():
            rest = parts[i:]
            return not rest or (len(rest) == 1 and _defines(module, rest[0]))
    return False


def missing(doc: str, root: Path) -> list[str]:
    """What the page names that is not there: a path, a dotted module, a test, a module of a
    table row's package; and a path to code not spelled from the repository's root."""
    wrong = []
    for row in doc.splitlines():
        package, *named = _spans(row) if ROW.match(row) else [""]
        for span in named:  # in a package's row, ``model.py`` is that package's module
            if re.fullmatch(r"\w+\.py", span) and not (root / package / span).is_file():
                wrong.append(f"{package}{span}")
    for span in sorted(set(_spans(doc))):
        if "<" in span or " " in span or span == "vimesync.toml":  # a pattern, code, the config file
            continue
        if re.fullmatch(r"vimesync(\.\w+)+", span):
            if not _dotted_exists(span, root):
                wrong.append(span)
            continue
        path, _, test = span.partition("::")
        if not path.startswith(ROOTS):
            if path.endswith(".py") and ("/" in path or not _in_a_row(doc, path)):
                wrong.append(f"{span} (name it from the repository's root)")
            continue
        target = root / path
        if not (target.is_dir() if path.endswith("/") else target.is_file()):
            wrong.append(span)
        elif test and not _defines(target, test):
            wrong.append(span)
    return wrong


def _in_a_row(doc: str, span: str) -> bool:
    return all(ROW.match(line) for line in doc.splitlines() if f"`{span}`" in line)


def layers(root: Path) -> tuple[tuple[str, ...], ...]:
    """``LAYERS`` of tests/test_layers.py, read from its source (a test module imports no other:
    tests/test_test_layout.py)."""
    path = root / "tests" / "test_layers.py"
    names: dict[str, Any] = {"tuple": tuple}
    for node in ast.parse(path.read_bytes(), str(path)).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in ("INFRA", "LAYERS"):
                code = compile(ast.Expression(node.value), str(path), "eval")
                names[target.id] = eval(code, {"__builtins__": {}}, names)  # our own literal tuples
    result: tuple[tuple[str, ...], ...] = names["LAYERS"]
    return result


def out_of_order(doc: str, order: tuple[tuple[str, ...], ...]) -> list[str]:
    """The table's rows against the layers: each row's unit in a layer no lower than the row
    before's, and every unit of every layer with a row."""
    level = {unit: i for i, units in enumerate(order) for unit in units}
    rows = [(path, path.split("/")[1].removesuffix(".py")) for path in ROW.findall(doc)]
    wrong = [f"{path}: no layer" for path, unit in rows if unit not in level]
    ranked = [(path, level[unit]) for path, unit in rows if unit in level]
    wrong += [f"{b} after {a}" for (a, i), (b, j) in zip(ranked, ranked[1:], strict=False) if j < i]
    listed = {unit for _, unit in rows}
    wrong += [f"{unit}: no row" for units in order[1:] for unit in units if unit not in listed]
    return wrong


def _doc() -> str:
    return (ROOT / DOC).read_text(encoding="utf-8")


def test_every_package_and_top_level_module_is_named() -> None:
    assert not unnamed(_doc(), ROOT), f"name each in {DOC}'s packages table, with its role"


def test_every_infrastructure_module_of_the_layer_test_is_named() -> None:
    named = set(_spans(_doc()))
    infra = layers(ROOT)[1]
    assert len(infra) > 10
    assert [u for u in infra if f"vimesync/{u}.py" not in named and f"vimesync/{u}/" not in named] == []


def test_every_path_module_and_test_named_exists() -> None:
    assert not missing(_doc(), ROOT), f"{DOC} names what is not there"


def test_the_table_lists_the_packages_in_the_layer_order() -> None:
    assert not out_of_order(_doc(), layers(ROOT))


def test_the_lint_bounds_are_the_ones_stated() -> None:
    """C901 at 15 and PLR0913 at 8, no file exempt from either, mypy strict: as the page says."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    lint = project["ruff"]["lint"]
    assert {"C901", "PLR0913"} <= set(lint["select"])
    exempt = [f for f, codes in lint.get("per-file-ignores", {}).items() if {"C901", "PLR0913"} & set(codes)]
    assert exempt == []
    doc = _doc()
    stated = (
        f"`max-complexity = {lint['mccabe']['max-complexity']}`",
        f"`max-args = {lint['pylint']['max-args']}`",
        f"`strict = {str(project['mypy']['strict']).lower()}`",
    )
    assert [s for s in stated if s not in doc] == []
    bounds = (lint["mccabe"]["max-complexity"], lint["pylint"]["max-args"], project["mypy"]["strict"])
    assert bounds == (15, 8, True)  # issue 28's: loosening them is a decision, never a drift
    noqa = re.compile(rb"#\s*no" rb"qa:[^\n]*\b(C901|PLR0913)\b")  # split, so that this line is no waiver
    files = [p for d in ("vimesync", "tests", "bench") for p in (ROOT / d).rglob("*.py")]
    assert [p for p in files if noqa.search(p.read_bytes())] == []


def test_the_checks_see_what_they_refuse(tmp_path: Path) -> None:
    pkg = tmp_path / "vimesync"
    for folder in ("carry", "newpkg", "demo/data/engine"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text("X = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_b():\n    pass\n")
    doc = (
        "| `vimesync/settings.py` | s |\n| `vimesync/carry/` | c, `run.py`, `__init__.py` |\n"
        "`vimesync/gone.py` `vimesync.settings.X` `vimesync.settings.Y` `tests/test_a.py::test_b`"
        " `tests/test_a.py::test_c` `tests/gone.py` `carry/run.py` `vimesync/app/<name>.py`"
    )
    assert unnamed(doc, tmp_path) == ["vimesync/newpkg/"]  # a package added without a line
    assert missing(doc, tmp_path) == [
        "vimesync/carry/run.py",  # a module of a row's package
        "carry/run.py (name it from the repository's root)",
        "tests/gone.py",
        "tests/test_a.py::test_c",
        "vimesync.settings.Y",
        "vimesync/gone.py",  # a named module removed
    ]
    order = (("__init__",), ("settings",), ("carry",))
    assert out_of_order(doc, order) == []
    swapped = "| `vimesync/carry/` | c |\n| `vimesync/settings.py` | s |\n"
    assert out_of_order(swapped, order) == ["vimesync/settings.py after vimesync/carry/"]
    assert out_of_order("| `vimesync/carry/` | c |\n", order) == ["settings: no row"]
