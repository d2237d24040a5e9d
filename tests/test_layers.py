"""The package reads as the pipeline: no module imports a later step, and nothing imports in a circle.

Every import counts, including those deferred into a function body (a deferred import hides a
cycle from Python, not from the design). See docs/ARCHITECTURE.md for the picture.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "vimesync"

# Lowest first. A module may import its own unit and any unit of an earlier layer.
# Infrastructure modules are units of their own; among them only the no-cycle rule applies.
INFRA: tuple[str, ...] = tuple(
    (
        "errors settings procrun transport text nofollow safefs tomledit git readers codestamp statefile"
        " globs regex pathmap config"
        " repopaths github buildkite registry pins"
    ).split()
)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__",),
    INFRA,
    ("patches",),
    ("pycheck",),
    ("sources",),
    ("check",),
    ("upstream",),
    ("carry",),
    ("audit",),
    ("ci",),
    ("sop",),
    ("report",),
    ("lint",),
    ("scaffold",),
    ("outputs",),
    ("bot",),  # the sync bot's plan and text, over the report's
    ("app",),  # one use case per command, over every step above
    ("demo",),
    ("cli",),  # with vimesync.__main__
)


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "demo/data" in path.as_posix():  # the demo engine's files are data, not vimesync code
            continue
        out[_module_name(path)] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The vimesync modules ``name`` imports (``from pkg import mod`` resolves to the module)."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    unit = parts[1] if len(parts) > 1 else "__init__"
    return "cli" if unit == "__main__" else unit


def _layer(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"vimesync.{unit} belongs to no layer: add it to LAYERS and docs/ARCHITECTURE.md")


GRAPH = {name: _imports(name, path, set(_modules())) for name, path in _modules().items()}


def test_every_module_has_a_layer() -> None:
    for name in GRAPH:
        _layer(_unit(name))


def test_no_module_imports_a_later_step() -> None:
    upward = []
    for name, deps in GRAPH.items():
        unit = _unit(name)
        for dep in deps:
            other = _unit(dep)
            if other != unit and _layer(other) >= _layer(unit) and not (unit in INFRA and other in INFRA):
                upward.append(f"{name} -> {dep}")
    assert not upward, "imports against the pipeline's direction:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            for dep in it:
                if dep not in index:
                    index[dep] = low[dep] = counter
                    counter += 1
                    stack.append(dep)
                    on.add(dep)
                    work.append((dep, iter(sorted(graph.get(dep, ())))))
                    break
                if dep in on:
                    low[node] = min(low[node], index[dep])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        m = stack.pop()
                        on.discard(m)
                        comp.add(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(sorted(c)) for c in cycles)


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"a"}}, [frozenset({"a", "b"})]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [frozenset({"a", "b", "c"})]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], expected: list[frozenset[str]]) -> None:
    assert _cycles(graph) == expected


def test_the_import_reader_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from vimesync.report import markdown\n    from . import git\n")
    known = {"vimesync.report", "vimesync.report.markdown", "vimesync.git", "vimesync.cli.m"}
    assert _imports("vimesync.cli.m", f, known) == {"vimesync.report.markdown"}


# The CLI parses, calls one use case and renders: it reaches git and the file system only through
# the use cases, and a command module never reaches into another (cli/sop.py once imported three
# private helpers of cli/report.py). Its shared modules are the only ones a command may import.
CLI_SHARED = {"vimesync.cli", "vimesync.cli.options", "vimesync.cli.output", "vimesync.cli.cioutputs"}
CLI_SHARED |= {"vimesync.cli.progress", "vimesync.cli.groups", "vimesync.cli.emit", "vimesync.__main__"}
CLI_SHARED |= {"vimesync.cli.ownoptions", "vimesync.cli.tree"}  # command modules' groups; the table
# The option aliases are a package (one module per concept); its modules are shared as it is.
CLI_SHARED |= {name for name in GRAPH if name.startswith("vimesync.cli.options.")}
CLI_FORBIDDEN = ("vimesync.git", "vimesync.safefs", "vimesync.nofollow")


def _is_render(module: str) -> bool:
    return module == "vimesync.cli.render" or module.startswith("vimesync.cli.render.")


def test_the_cli_reaches_git_and_files_only_through_use_cases() -> None:
    bad = sorted(
        f"{name} -> {dep}"
        for name, deps in GRAPH.items()
        if _unit(name) == "cli"
        for dep in deps
        if any(dep == f or dep.startswith(f + ".") for f in CLI_FORBIDDEN)
    )
    assert not bad, "CLI modules importing git or the file system directly:\n" + "\n".join(bad)


def test_no_command_module_imports_another() -> None:
    bad = []
    for name, deps in GRAPH.items():
        if _unit(name) != "cli" or name in CLI_SHARED or name == "vimesync.cli.app":
            continue
        for dep in deps:
            if _unit(dep) != "cli" or dep in CLI_SHARED:
                continue
            if _is_render(dep):  # the render home (cli/render/) is shared; command modules are not
                continue
            bad.append(f"{name} -> {dep}")
    assert not bad, "a CLI command module imports another:\n" + "\n".join(sorted(bad))


def test_commands_use_the_option_package_names_not_its_modules() -> None:
    """``from vimesync.cli.options import ConfigOpt``: an alias may move between the package's
    modules (one per concept) without a command noticing."""
    bad = sorted(
        f"{name} -> {dep}"
        for name, deps in GRAPH.items()
        if not name.startswith("vimesync.cli.options")
        for dep in deps
        if dep.startswith("vimesync.cli.options.")
    )
    assert not bad, "import the aliases from vimesync.cli.options:\n" + "\n".join(bad)


# The job's environment is read in one place (vimesync/settings.py): the CLI boundary takes one
# snapshot and passes it down.
ENVIRON_READER = "vimesync.settings"


def _reads_environment(path: Path) -> bool:
    """``os.environ``, ``os.environb``, ``os.getenv``/``putenv``/``unsetenv``, or ``environ``
    imported from os, anywhere in the module."""
    tree = ast.parse(path.read_bytes(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            if node.attr in ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"):
                return True
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(a.name in ("environ", "environb", "getenv", "putenv") for a in node.names):
                return True
    return False


def test_only_settings_reads_the_environment() -> None:
    readers = {name for name, path in _modules().items() if _reads_environment(path)}
    assert readers == {ENVIRON_READER}, "read the environment through vimesync.settings"


# Modules stay under 400 lines, so a reader can guess a module's content from its name (a rule of
# docs/ARCHITECTURE.md).
MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    long = {name for name, path in _modules().items() if len(path.read_bytes().splitlines()) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {sorted(long)}"


# Every fact of a sync is resolved once, in the workspace (vimesync/app/workspace.py and the
# sync point it finds, app/syncpoint.py): no other module looks a config, a location or a
# baseline up for itself, and the job's environment is taken once, at the CLI boundary.
RESOLVERS = {
    "load_config": {"vimesync.app.workspace"},
    "repository_path": {"vimesync.app.workspace"},
    "determine_baseline": {"vimesync.app.syncpoint"},
    "recorded_sync": {"vimesync.app.syncpoint"},
    "Settings.capture": {"vimesync.cli.app", "vimesync.settings"},
}
# Where the snapshot the boundary installed is read: the child-process choke points (a child's
# environment is process-wide by nature) and the job's HOME where a checkout's root is looked for
# (safefs.reach, under every file read); everything else gets its settings passed.
INSTALLED_READERS = {"vimesync.settings", "vimesync.git.disarm", "vimesync.procrun"}
INSTALLED_READERS |= {"vimesync.pycheck.interp", "vimesync.safefs.reach"}


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                names.add(f"{f.value.id}.{f.attr}")  # Settings.capture, not procrun's capture
    return names


def test_facts_are_resolved_in_the_workspace_only() -> None:
    calls = {name: _calls(path) for name, path in _modules().items()}
    wrong = sorted(
        f"{module} calls {fn}()"
        for module, called in calls.items()
        for fn, allowed in RESOLVERS.items()
        if fn in called and module not in allowed
    )
    assert not wrong, "resolve it in the workspace (app/workspace.py) and pass it down:\n" + "\n".join(wrong)
    readers = {module for module, called in calls.items() if "installed" in called}
    assert readers <= INSTALLED_READERS, f"settings.installed() outside the process choke points: {readers}"


# A class name means one thing across the package (issue 28): two concepts get two names.


def test_no_class_name_is_defined_twice() -> None:
    where: dict[str, list[str]] = {}
    for name, path in _modules().items():
        for node in ast.parse(path.read_bytes(), str(path)).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(name)
    twice = {cls: mods for cls, mods in where.items() if len(mods) > 1}
    assert not twice, twice
