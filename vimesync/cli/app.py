"""The ``vimesync`` entry point and the one boundary that maps errors to exit codes."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vimesync import __version__
from vimesync.cli import output
from vimesync.errors import EXIT_BAD_INPUT, Terminated, VimesyncError

if TYPE_CHECKING:
    from collections.abc import Callable
    from enum import Enum

    import typer

HELP = "Keep a downstream fork in sync with its upstream and its pinned engine patch stack."
PATCHES_HELP = "Work with the engine patch stack."
PIN_HELP = "Move the engine pin."
AUDIT_HELP = (
    "Audit the paths a sync changed against the upstream tip (vimesync audit [OPTIONS]); "
    "record reviews (vimesync audit review PATH... --by NAME [OPTIONS])."
)
SOP_HELP = "The sync procedure as checkable gates (sop/SYNC.md)."


COMMANDS = (
    "init",
    "walk",
    "carry",
    "patches",
    "pin",
    "audit",
    "report",
    "demo",
    "ci",
    "sop",
    "sync",
)  # the top-level names build_app registers


# The commands inside each group, and inside those: a run naming one needs no group's --help.
INNER: dict[str, Any] = {
    "patches": {"check": {}, "lint": {}, "describe": {}, "refresh": {}},
    "pin": {"bump": {}, "scan": {}, "radar": {}},
    "audit": {"review": {}},
    "sop": {
        "status": {},
        "regress": {},
        "promote": {},
        "record": {"image": {}, "tests": {}, "run": {}, "ci": {}, "precommit": {}},
    },
}


def build_app(only: str | None = None, *, inner: tuple[str, ...] = ()) -> typer.Typer:
    """The whole command tree, every command and group registered here and nowhere else.

    Command modules define plain functions over the aliases of :mod:`vimesync.cli.options` and
    never import this module. Help is click's plain formatter (``rich_markup_mode=None``): no
    ``<bool>``/``<str>`` type column, and ``--help`` does not import rich.

    ``only`` (one of :data:`COMMANDS`): the tree with just that top-level command, for a run that
    names it first; the other command modules are then neither imported nor turned into click
    commands (start-up: ``vimesync walk`` does not pay for ``audit``'s options).

    ``inner``: the groups a run names a command inside (``("patches",)`` for ``patches check``):
    their own ``--help`` cannot be asked, and left out it costs no coercion (see :func:`_inner`).
    """
    import typer

    from vimesync.cli.groups import expand

    # 100 columns at most (click: 80): the option column of --junit/--annotations leaves room for help.
    settings: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

    def group(help: str, name: str = "", **kwargs: Any) -> typer.Typer:
        return typer.Typer(
            help=help,
            context_settings=settings,
            rich_markup_mode=None,
            add_help_option=name not in inner,
            **kwargs,
        )

    app = typer.Typer(
        name="vimesync",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,  # ours below: typer's guess the shell from the parent processes
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=settings,
        # A run that names its command first has no root --help to ask (the command has its own),
        # and the root's, not given, would cost that run typer's pydantic coercion of its value.
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
        # would come before the name), and a str option costs every run typer's pydantic
        # coercion, even ``walk --help``: without them the root has a bool flag only.
        @app.callback()
        def _command_root(version: bool = version_option) -> None:
            """Walk, classify, apply, audit, report."""

    else:

        @app.callback()
        def _root(
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

    if only == "":  # the root help: one line per command, none of their options built
        _outline(app, group)
        return app

    if only in (None, "init"):
        from vimesync.cli import init

        app.command("init")(expand(init.init))

    if only in (None, "walk"):
        from vimesync.cli import walk

        app.command("walk")(expand(walk.walk_command))

    if only in (None, "carry"):
        from vimesync.cli import carry

        app.command("carry")(expand(carry.carry_command))

    if only in (None, "patches"):
        from vimesync.cli import lint, patches

        patches_app = group(PATCHES_HELP, "patches", no_args_is_help=True)
        patches_app.command("check")(expand(patches.check))
        patches_app.command("lint")(expand(lint.lint))
        patches_app.command("describe")(expand(lint.describe))
        patches_app.command("refresh")(expand(lint.refresh))
        app.add_typer(patches_app, name="patches")

    if only in (None, "pin"):
        from vimesync.cli import pin

        pin_app = group(PIN_HELP, "pin", no_args_is_help=True)
        pin_app.command("bump")(expand(pin.bump))
        pin_app.command("scan")(expand(pin.scan))
        pin_app.command("radar")(expand(pin.radar))
        app.add_typer(pin_app, name="pin")

    if only in (None, "audit"):
        from vimesync.cli import audit

        audit_app = group(AUDIT_HELP, "audit", invoke_without_command=True)
        audit_app.callback()(expand(audit.audit))
        audit_app.command("review")(expand(audit.review))
        app.add_typer(audit_app, name="audit")

    if only in (None, "report"):
        from vimesync.cli import report

        app.command("report")(expand(report.report))

    if only in (None, "demo"):
        from vimesync.cli import demo

        app.command("demo")(expand(demo.demo))

    if only in (None, "ci"):
        from vimesync.cli import ci

        app.command("ci")(expand(ci.ci))

    if only in (None, "sop"):
        from vimesync.cli import sop

        sop_app = group(SOP_HELP, "sop", no_args_is_help=True)
        sop_app.command("status")(expand(sop.status))
        sop_app.command("regress")(expand(sop.regress))
        record_app = group("Record evidence for the sync head.", "sop record", no_args_is_help=True)
        record_app.command("image")(expand(sop.record_image))
        record_app.command("tests")(expand(sop.record_tests))
        record_app.command("run")(expand(sop.record_run))
        record_app.command("ci")(expand(sop.record_ci))
        record_app.command("precommit")(expand(sop.record_precommit))
        sop_app.add_typer(record_app, name="record")
        sop_app.command("promote")(expand(sop.promote))
        app.add_typer(sop_app, name="sop")

    if only in (None, "sync"):
        from vimesync.cli import sync

        app.command("sync")(expand(sync.sync_command))
    return app


def _outline(app: typer.Typer, group: Any) -> None:
    """What the root help lists, as cheaply as it can be: each command by a stub that carries its
    docstring (typer builds no option of it), each group by its help. Same order as build_app."""
    from vimesync.cli import carry, ci, demo, init, report, sync, walk

    def stub(fn: Any) -> Any:
        def command() -> None:  # pragma: no cover - only listed, never run
            raise AssertionError("the root help's outline is never run")

        command.__doc__ = fn.__doc__
        return command

    commands = (
        ("init", init.init),
        ("walk", walk.walk_command),
        ("carry", carry.carry_command),
        ("report", report.report),
        ("demo", demo.demo),
        ("ci", ci.ci),
        ("sync", sync.sync_command),
    )
    for name, fn in commands:
        app.command(name)(stub(fn))
    for name, help_ in (
        ("patches", PATCHES_HELP),
        ("pin", PIN_HELP),
        ("audit", AUDIT_HELP),
        ("sop", SOP_HELP),
    ):
        app.add_typer(group(help_), name=name)


def _only(args: list[str], *, completing: bool = False) -> str | None:
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


def _inner(args: list[str], *, completing: bool = False) -> tuple[str, ...]:
    """The groups ``args`` name a command inside, outermost first: ``sop record image`` ->
    ``("sop", "sop record")``. A group's --help not given is still coerced by typer (through
    pydantic, ~0.1 s); one followed by its command's name cannot be given, so it is left out."""
    if completing:
        return ()
    found: list[str] = []
    level, path = INNER, []
    for word in args:
        if word not in level or not level[word]:
            break
        path.append(word)
        level = level[word]
        found.append(" ".join(path))
    # The last group counts only when a command of it follows.
    return tuple(g for i, g in enumerate(found) if len(args) > i + 1 and args[i + 1] in _at(g))


def _at(group: str) -> dict[str, Any]:
    level = INNER
    for word in group.split():
        level = level[word]
    return level


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


def _usage_error(exc: BaseException) -> bool:
    """click's (or typer's vendored click's) usage errors: they know how to show themselves."""
    return callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)


def _wants_json(argv: list[str]) -> bool:
    """``--json``, ``--format json`` or ``--format=json`` among the arguments."""
    pairs = zip(argv, argv[1:], strict=False)
    return "--json" in argv or "--format=json" in argv or ("--format", "json") in pairs


def _fail(message: str, code: int, argv: list[str], *, hint: str | None = None) -> None:
    """One line on stderr (and, when JSON was asked for, a JSON document on stdout), then exit."""
    from vimesync.app.result import error_document

    output.error(message, hint=hint)
    if _wants_json(argv):
        output.emit_json(error_document(message, code))
    sys.exit(code)


def _on_sigterm(signum: int, frame: object) -> None:
    # Once: a second SIGTERM during the cleanup must not abandon it half-way (SIGKILL still works).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(signum)


_INTERRUPTED: list[bool] = [False]  # SIGINT arrived during this command (see _on_sigint)


def _on_sigint(signum: int, frame: object) -> None:
    # typer (0.29) turns a KeyboardInterrupt into a silent ``Exit(130)`` returned as the
    # command's value: the flag lets _main still say "interrupted" in its one line.
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


@contextmanager
def _signals_unwind() -> Iterator[None]:
    """SIGTERM raises Terminated and SIGINT KeyboardInterrupt for the duration of the command
    (not when the job set either to be ignored, nor outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    if saved[signal.SIGTERM] != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _on_sigterm)
    if saved[signal.SIGINT] != signal.SIG_IGN:
        _INTERRUPTED[0] = False
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. User mistakes become a one-line message and exit 2, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before typer and rich are imported: start-up is the cost
        sys.stdout.write(f"vimesync {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    with _signals_unwind():
        _main(args)


def _main(args: list[str]) -> None:
    import typer
    import typer.main

    from vimesync.settings import Settings, install

    # The job's environment, read once: every command takes what it needs from this snapshot.
    settings = Settings.capture()
    output.configure(settings)
    if settings.completing:
        # typer registers its shells' completion classes only for its own --install-completion,
        # which the app replaces (it guessed the shell): without them every TAB printed "Shell
        # bash not supported."
        import typer.completion

        # not exported by typer.completion (mypy --strict): looked up by name, typed here
        completion_init: Callable[[], None] = vars(typer.completion)["completion_init"]
        completion_init()
    try:
        completing = settings.completing
        command = typer.main.get_command(
            build_app(_only(args, completing=completing), inner=_inner(args, completing=completing))
        )
        with install(settings):
            rv = command.main(args=args, prog_name="vimesync", standalone_mode=False, obj=settings)
    except Terminated:
        _fail("terminated", 128 + signal.SIGTERM, args)
    except VimesyncError as exc:
        _fail(exc.message, exc.exit_code, args, hint=exc.hint)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _fail("interrupted", 128 + signal.SIGINT, args)
    except OSError as exc:
        # An output path that cannot be written (--export, --output, --keep): name it, no traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", EXIT_BAD_INPUT, args)
    except Exception as exc:
        if not _usage_error(exc):
            raise
        exc.show()  # type: ignore[attr-defined]
        code = exc.exit_code  # type: ignore[attr-defined]
        code = EXIT_BAD_INPUT if code in (1, 2) else code
        if _wants_json(args):  # one JSON document on stdout, as for every other error
            from vimesync.app.result import error_document

            fmt = getattr(exc, "format_message", None)
            message = fmt() if callable(fmt) else str(exc)
            output.emit_json(error_document(message, code))
        sys.exit(code)
    if _INTERRUPTED[0] and rv == 128 + signal.SIGINT:  # typer's silent Exit(130) for a Ctrl-C
        _fail("interrupted", rv, args)
    sys.exit(rv if isinstance(rv, int) else 0)
