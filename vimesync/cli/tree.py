"""The command tree, spelled once: :data:`TREE` names every command and group, and everything else
is derived from it — the whole tree typer reads, the tree of a run that names its command (just
that command: ``vimesync walk`` neither imports nor builds ``audit``), the root help's outline and
the groups whose ``--help`` a run cannot ask.

Command modules define plain functions over the flag groups of :mod:`vimesync.cli.groups` and the
aliases of :mod:`vimesync.cli.options`, and never import this module. Help is click's plain
formatter (``rich_markup_mode=None``): no ``<bool>``/``<str>`` type column, and ``--help`` does not
import rich.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from vimesync import __version__
from vimesync.cli import output

if TYPE_CHECKING:
    from enum import Enum

    import typer

HELP = "Keep a downstream fork in sync with its upstream and its pinned engine patch stack."


class Node(NamedTuple):
    """One command or group: the words a user types (``"sop record image"``), where its function
    is (``vimesync.cli.<module>.<function>``), and for a group its help. A group with a function
    runs it when no command of it is named (``vimesync audit``); one without shows its help."""

    path: str
    module: str = ""
    function: str = ""
    help: str = ""  # a group's; a command's is its function's docstring

    @property
    def name(self) -> str:
        return self.path.rsplit(" ", 1)[-1]

    @property
    def parent(self) -> str:
        return self.path.rpartition(" ")[0]

    @property
    def top(self) -> str:
        return self.path.split(" ", 1)[0]

    @property
    def is_group(self) -> bool:
        return bool(self.help)

    def load(self) -> Callable[..., int]:
        from importlib import import_module

        fn: Callable[..., int] = getattr(import_module(f"vimesync.cli.{self.module}"), self.function)
        return fn


# Each level lists its commands before its groups (typer's order, and the help's).
TREE = (
    Node("init", "init", "init"),
    Node("walk", "walk", "walk_command"),
    Node("carry", "carry", "carry_command"),
    Node("report", "report", "report"),
    Node("demo", "demo", "demo"),
    Node("ci", "ci", "ci"),
    Node("sync", "sync", "sync_command"),
    Node("bot", "bot", "bot_command"),
    Node("patches", help="Work with the engine patch stack."),
    Node("patches check", "patches", "check"),
    Node("patches lint", "lint", "lint"),
    Node("patches describe", "lint", "describe"),
    Node("patches refresh", "lint", "refresh"),
    Node("pin", help="Move the engine pin."),
    Node("pin bump", "pin", "bump"),
    Node("pin scan", "pin", "scan"),
    Node("pin radar", "pin", "radar"),
    Node(
        "audit",
        "audit",
        "audit",
        help="Audit the paths a sync changed against the upstream tip (vimesync audit [OPTIONS]); "
        "record reviews (vimesync audit review PATH... --by NAME [OPTIONS]).",
    ),
    Node("audit review", "audit", "review"),
    Node("sop", help="The sync procedure as checkable gates (sop/SYNC.md)."),
    Node("sop status", "sop", "status"),
    Node("sop regress", "sop", "regress"),
    Node("sop promote", "sop", "promote"),
    Node("sop record", help="Record evidence for the sync head."),
    Node("sop record image", "sop", "record_image"),
    Node("sop record tests", "sop", "record_tests"),
    Node("sop record run", "sop", "record_run"),
    Node("sop record ci", "sop", "record_ci"),
    Node("sop record precommit", "sop", "record_precommit"),
)
COMMANDS = tuple(node.path for node in TREE if " " not in node.path)  # the top-level names
GROUPS = {node.path: node for node in TREE if node.is_group}


def build_app(only: str | None = None, *, inner: tuple[str, ...] = ()) -> typer.Typer:
    """The command tree as typer reads it.

    ``only`` (one of :data:`COMMANDS`): the tree with just that top-level command, for a run that
    names it first; the other command modules are then neither imported nor turned into click
    commands (start-up: ``vimesync walk`` does not pay for ``audit``'s options). ``""``: the root
    help's outline (:func:`_outline`).

    ``inner``: the groups a run names a command inside (``("patches",)`` for ``patches check``):
    their own ``--help`` cannot be asked, and is left out (see :func:`inner_groups`).
    """
    from vimesync.cli.groups import expand

    app = _root(only)
    if only == "":
        _outline(app)
        return app
    apps: dict[str, typer.Typer] = {"": app}
    for node in TREE:
        if only is not None and node.top != only:
            continue
        parent = apps[node.parent]
        if not node.is_group:
            parent.command(node.name)(expand(node.load()))
            continue
        runs = bool(node.function)
        sub = _group(node.help, add_help_option=node.path not in inner, runs=runs)
        if runs:
            sub.callback()(expand(node.load()))
        parent.add_typer(sub, name=node.name)
        apps[node.path] = sub
    return app


# 100 columns at most (click: 80): the option column of --junit/--annotations leaves room for help.
_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _group(help: str, *, add_help_option: bool = True, runs: bool = False) -> typer.Typer:
    import typer

    return typer.Typer(
        help=help,
        context_settings=_CONTEXT,
        rich_markup_mode=None,
        add_help_option=add_help_option,
        invoke_without_command=runs,
        no_args_is_help=not runs,
    )


def _root(only: str | None) -> typer.Typer:
    """The root, its ``--version`` and (when the whole tree is built) the completion options."""
    import typer

    app = typer.Typer(
        name="vimesync",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,  # ours below: typer's guess the shell from the parent processes
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=_CONTEXT,
        # A run that names its command first has no root --help to ask (the command has its own).
        add_help_option=not only,
    )

    def show_version(value: bool) -> None:
        if value:
            output.out(f"vimesync {__version__}")
            raise typer.Exit(0)

    version_option = typer.Option(
        False, "--version", callback=show_version, is_eager=True, help="Print the version and exit."
    )
    if only:
        # A run that names its command first cannot give the root's completion options (they
        # would come before the name): without them the root has a bool flag only.
        @app.callback()
        def _command_root(version: bool = version_option) -> None:
            """Walk, classify, apply, audit, report."""

        return app

    @app.callback()
    def _whole_root(
        # A default, not Annotated: this module imports typer only here, and typer reads
        # annotations by name.
        version: bool = version_option,
        install_completion: str | None = typer.Option(
            None,
            "--install-completion",
            **_completion_option("install"),
            help="Install completion for SHELL: bash, zsh, fish, powershell or pwsh.",
        ),
        show_completion: str | None = typer.Option(
            None,
            "--show-completion",
            **_completion_option("show"),
            help="Print the completion script for SHELL, to copy it or customise the install.",
        ),
    ) -> None:
        """Walk, classify, apply, audit, report."""

    return app


def _outline(app: typer.Typer) -> None:
    """What the root help lists, as cheaply as it can be: each top-level command by a stub that
    carries its docstring (typer builds no option of it), each group by its help."""
    for node in TREE:
        if " " in node.path:
            continue
        if node.is_group:
            app.add_typer(_group(node.help), name=node.name)
        else:
            app.command(node.name)(_stub(node.load().__doc__))


def _stub(doc: str | None) -> Callable[[], None]:
    def command() -> None:  # pragma: no cover - only listed, never run
        raise AssertionError("the root help's outline is never run")

    command.__doc__ = doc
    return command


def only_command(args: list[str], *, completing: bool = False) -> str | None:
    """The command a run names first, when the rest of the tree cannot matter: not for shell
    completion (it reads its words from the environment and may list every command). ``""``: the
    root help alone (``vimesync``, ``-h``, ``--help``), which needs no command's options."""
    if completing:
        return None
    if args in ([], ["-h"], ["--help"]):
        return ""
    if args and args[0] in COMMANDS:
        return args[0]
    return None


def inner_groups(args: list[str], *, completing: bool = False) -> tuple[str, ...]:
    """The groups ``args`` name a command inside, outermost first: ``sop record image`` ->
    ``("sop", "sop record")``. A group's --help followed by the name of one of its commands cannot
    be given, so it is left out (typer 0.29 coerces even a flag not given through pydantic)."""
    if completing:
        return ()
    found: list[str] = []
    for i in range(len(args) - 1):
        path = " ".join(args[: i + 1])
        if path not in GROUPS or args[i + 1] not in _names_under(path):
            break
        found.append(path)
    return tuple(found)


def _names_under(group: str) -> set[str]:
    return {node.name for node in TREE if node.parent == group}


def _completion_option(action: str) -> dict[str, Any]:
    """``--install-completion SHELL``/``--show-completion SHELL``, the shell always named.

    typer's own are flags that guess the shell from the parent processes: without a shell among
    them (CI, cron, ``docker run``, a job started by a service) they failed with "Shell  not
    supported", and ``--show-completion zsh`` printed the script for the shell it ran in."""
    import typer.completion

    callback = getattr(typer.completion, f"{action}_callback")
    # typer.completion does not export Shells (mypy --strict): looked up by name, typed here
    shell_enum: type[Enum] = vars(typer.completion)["Shells"]
    shells = [shell.value for shell in shell_enum]

    def run(ctx: Any, param: Any, value: str | None) -> Any:
        if value is None or ctx.resilient_parsing:
            return value
        if value not in shells:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(map(repr, shells))}.")
        return callback(ctx, param, value)

    return {"metavar": "SHELL", "callback": run, "is_eager": True, "expose_value": False}
