"""Every "pass --X" a command can print names a flag that command takes.

``pin bump`` once told the user to "pass --engine NAME" and refused ``--engine``; ``sync`` said to
pass ``--ci-repo`` and refused it. This reads every message that tells the user to pass a flag
(``"pass --X"`` in a string, or ``flag="--X ..."`` handed to ``missing_input``), finds the
commands that can reach the function holding it (calls followed through the modules each module
imports, deferred imports included), and checks that each of those commands takes ``--X``.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vimesync"
PASS = re.compile(r"\bpass (--[a-z][a-z0-9-]*)")

# Calls the graph sees but a command takes only with a flag it then has: ``caller -> callee`` is
# followed only for a command that takes one of the flags named (None: never), with why. Keep it
# short: a message that names a flag some command reaching it lacks is a bug to fix, not list.
PIN_FLAGS = frozenset({"--source", "--rev", "--series", "--strip", "--python", "--export"})
ONLY_WITH: dict[tuple[str, str], tuple[frozenset[str] | None, str]] = {
    ("app.botperform:report_at", "app.report:make_report"): (
        None,
        "the bot's report is of its sync's head, downstream and baseline (a gate's hint: the report's text)",
    ),
    ("app.botperform:report_at", "report.markdown:render_markdown"): (
        None,
        "the report's text, for the PR's reader: what a gate says of vimesync report's flags",
    ),
    ("app.botperform:run_sync", "app.syncabort:abort"): (
        None,
        "the bot aborts the sync it started itself: a carry's abort, never a start",
    ),
    ("app.botperform:run_sync", "app.sync:sync"): (
        None,
        "the bot runs vimesync sync's use case: a stop names sync's flags, in the command the bot writes",
    ),
    ("app.botperform:_outcome", "app.report:ok"): (
        None,
        "the ok of a sync's step, not of a report",
    ),
    ("app.botperform:title_at", "app.upstreamsteps:walked"): (
        None,
        "the title walks the sync's head from the pin observe required; a failure keeps the bot's title",
    ),
    ("app.botobserve:_upstream", "app.upstreamsteps:walk"): (
        None,
        "the bot refuses a default branch without an upstream pin before it walks",
    ),
    ("app.workspace:resolve", "app.syncpoint:find_baseline"): (
        frozenset({"--head"}),
        "a workspace looks for the baseline only when the command's rule asks (audit, report, sop)",
    ),
    ("app.workspace:upstream_range", "upstream.pipeline:parse_range"): (
        frozenset({"--range"}),
        "the range is parsed only when --range gave one",
    ),
    ("check.model:check_plan", "check.model:apply_mode"): (
        frozenset({"--fuzz"}),
        "apply_mode refuses only what --applier/--fuzz say",
    ),
    ("check.model:check_plan", "check.model:_pick_pins"): (
        PIN_FLAGS,
        "several engines refuse a pin flag only",
    ),
    ("app.steps:ci_evidence", "ci.evidence:read_evidence"): (
        frozenset({"--pr"}),
        "the report's CI is read for its head's sha: never without a commit",
    ),
    ("app.lint:_strict_check", "check.run:run_check"): (
        frozenset({"--python"}),
        "lint --strict applies the stack without parsing it",
    ),
    ("check.run:_run_check", "check.run:exact_rev"): (
        frozenset({"--rev", "--source"}),
        "without a rev from the flags, a pin names it: the message says to write it there",
    ),
    ("app.status:sop_status", "app.workspace:sync_name"): (
        frozenset({"--sync"}),
        "sync's status step runs after its walk: an upstream, so a name, is known",
    ),
    ("app.steps:_audit", "app.workspace:sync_name"): (
        frozenset({"--sync"}),
        "the audit asks for the upstream first (pass --upstream): with one, the name is known",
    ),
    ("app.evidence:recorded_evidence", "app.workspace:sync_name"): (
        None,
        "caught there: no name, no evidence read",
    ),
    ("cli.demo:demo", "demo.pipeline:run_demo"): (None, "the demo builds every input itself"),
    ("app.resolved:_replayed", "app.upstreamsteps:walked"): (
        None,
        "caught there: no range to walk, no replay (the report and the audit say why themselves)",
    ),
    ("app.promote:promote", "report.model:gates"): (
        frozenset({"--source"}),
        "promote shows the ci and tests gates only, never the patches gate's hint",
    ),
    ("app.promote:promote", "report.checklist:ok"): (frozenset({"--source"}), "the same gates, through .ok"),
    ("report.checklist:images_gate", "sop.gates:gate"): (None, "the images hint names no flag"),
}


def _skipped(caller: str, callee: str, opts: set[str]) -> bool:
    edge = (
        caller.rsplit(":", 1)[0].removeprefix("vimesync."),
        callee.rsplit(":", 1)[0].removeprefix("vimesync."),
    )
    if edge not in ONLY_WITH:
        return False
    flags, _why = ONLY_WITH[edge]
    return flags is None or not flags & opts


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class _Module:
    def __init__(self, path: Path) -> None:
        self.name = _module_name(path)
        self.tree = ast.parse(path.read_bytes(), str(path))
        self.package = self.name if path.name == "__init__.py" else self.name.rpartition(".")[0]
        # local name -> (module, name imported from it; None when the name is the module itself):
        # the module's own imports, and every import anywhere in it (what it may reach)
        self.module_aliases = _imports(self, list(self.tree.body))
        # module-level names bound to text (a table of hints, a message): what a function naming
        # them can say
        self.constants: dict[str, list[str]] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.constants[target.id] = _strings(node.value)
        every = _imports(self, list(ast.walk(self.tree)))
        self.imported = {m for m, _ in every.values()} | {f"{m}.{n}" for m, n in every.values() if n}


def _imports(m: _Module, nodes: list[ast.AST]) -> dict[str, tuple[str, str | None]]:
    found: dict[str, tuple[str, str | None]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                found[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = m.package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                found[a.asname or a.name] = (base, a.name)
    return found


def _local_imports(m: _Module, fn: ast.FunctionDef) -> dict[str, tuple[str, str | None]]:
    return _imports(m, list(ast.walk(fn)))


def _strings(node: ast.AST) -> list[str]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.JoinedStr):
            out.append(
                "".join(v.value for v in n.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            )
    return out


def _flags_said(fn: ast.AST, texts: list[str] = ()) -> set[str]:  # type: ignore[assignment]
    said = set()
    for text in [*_strings(fn), *texts]:
        said |= set(PASS.findall(text))
    for n in ast.walk(fn):  # missing_input(config, what, flag="--upstream PATH", key=...)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "missing_input":
            for kw in n.keywords:
                if (
                    kw.arg == "flag"
                    and isinstance(kw.value, ast.Constant)
                    and isinstance(kw.value.value, str)
                ):
                    said.add(kw.value.value.split()[0])
    return said


def _named_texts(m: _Module, fn: ast.FunctionDef, modules: dict[str, _Module]) -> list[str]:
    """The text of the module-level constants ``fn`` names (its own module's, or imported)."""
    aliases = {**m.module_aliases, **_local_imports(m, fn)}
    texts: list[str] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            if n.id in m.constants:
                texts += m.constants[n.id]
            elif n.id in aliases and aliases[n.id][1] is not None:
                mod, name = aliases[n.id]
                if mod in modules and name in modules[mod].constants:
                    texts += modules[mod].constants[name]
    return texts


def _is_property(node: ast.FunctionDef) -> bool:
    return any(
        getattr(d, "id", getattr(d, "attr", "")) in ("property", "cached_property")
        for d in node.decorator_list
    )


Graph = tuple[dict[str, tuple[_Module, ast.FunctionDef]], dict[str, set[str]], dict[str, _Module]]


def _graph() -> Graph:
    """Every function and method by ``module:name:line``, and those each can call: a name
    imported from a module (``from m import f``, ``m.f``) resolves there; a method call on any
    other object resolves to the methods of that name in the modules the caller imports (and its
    own); a property read likewise."""
    paths = [p for p in sorted(PACKAGE.rglob("*.py")) if "demo/data" not in p.as_posix()]
    modules = [_Module(p) for p in paths]
    by_name = {m.name: m for m in modules}
    functions: dict[str, tuple[_Module, ast.FunctionDef]] = {}
    top: dict[tuple[str, str], list[str]] = defaultdict(list)
    methods: dict[str, list[str]] = defaultdict(list)
    props: dict[str, list[str]] = defaultdict(list)
    for m in modules:
        for node in m.tree.body:
            if isinstance(node, ast.FunctionDef):
                key = f"{m.name}:{node.name}:{node.lineno}"
                functions[key] = (m, node)
                top[(m.name, node.name)].append(key)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        key = f"{m.name}:{item.name}:{item.lineno}"
                        functions[key] = (m, item)
                        (props if _is_property(item) else methods)[item.name].append(key)
                        top[(f"{m.name}.{node.name}", item.name)].append(key)

    def near(m: _Module, key: str) -> bool:
        owner = key.split(":")[0]
        return owner == m.name or owner in m.imported

    edges: dict[str, set[str]] = {}
    for key, (m, node) in functions.items():
        targets: set[str] = set()
        aliases = {**m.module_aliases, **_local_imports(m, node)}
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                mod, orig = aliases.get(n.func.id, (m.name, n.func.id))
                targets.update(top.get((mod, orig or n.func.id), ()))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                attr, obj = n.func.attr, n.func.value
                if isinstance(obj, ast.Name) and obj.id in aliases:
                    mod, orig = aliases[obj.id]
                    owner = mod if orig is None else f"{mod}.{orig}"
                    targets.update(top.get((owner, attr), ()))  # module.function, Class.method
                else:
                    targets.update(k for k in methods.get(attr, ()) if near(m, k))
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
                targets.update(k for k in props.get(n.attr, ()) if near(m, k))
        edges[key] = targets
    return functions, edges, by_name


def _commands() -> dict[str, tuple[str, set[str]]]:
    """Each command's function (``module:name``) and the options it takes."""
    import typer.main

    from vimesync.cli.app import build_app

    found: dict[str, tuple[str, set[str]]] = {}

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        subs = getattr(cmd, "commands", None)
        if path and (subs is None or getattr(cmd, "invoke_without_command", False)):
            fn = cmd.callback  # typer's wrapper, then ours (expand), named as the command's function
            while hasattr(fn, "__wrapped__"):
                fn = fn.__wrapped__
            opts = {o for p in cmd.params for o in p.opts}
            found[" ".join(path)] = (f"{fn.__module__}:{fn.__name__}", opts)
        for name, sub in (subs or {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(build_app()), [])
    return found


def test_every_flag_a_command_tells_the_user_to_pass_is_one_it_takes() -> None:
    functions, edges, modules = _graph()
    wrong = []
    for command, (origin, opts) in _commands().items():
        module, name = origin.split(":")
        starts = [k for k in functions if k.startswith(f"{module}:{name}:")]
        assert starts, (command, origin)
        came: dict[str, str] = dict.fromkeys(starts, "")
        todo = list(starts)
        while todo:
            here = todo.pop()
            for nxt in edges[here]:
                if _skipped(here, nxt, opts):
                    continue
                if nxt not in came:
                    came[nxt] = here
                    todo.append(nxt)
        for key in came:
            m, fn = functions[key]
            for flag in _flags_said(fn, _named_texts(m, fn, modules)):
                if flag in opts:
                    continue
                path, at = [], key
                while at:
                    path.append(at.rsplit(":", 1)[0].removeprefix("vimesync."))
                    at = came[at]
                wrong.append(f"{command}: 'pass {flag}' in {' <- '.join(path)}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_reader_finds_the_known_cases(tmp_path: Path) -> None:
    code = 'def f(config):\n    raise missing_input(config, "x", flag="--upstream PATH", key="k")\n'
    code += 'def g():\n    return f"pass --engine NAME ({1})"\n'
    tree = ast.parse(code)
    f, g = tree.body
    assert _flags_said(f) == {"--upstream"} and _flags_said(g) == {"--engine"}


@pytest.mark.parametrize("text", ["pass --ci-repo owner/name", "hint: pass --engine NAME to say which"])
def test_the_pattern(text: str) -> None:
    assert PASS.findall(text)
