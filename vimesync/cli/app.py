"""The ``vimesync`` entry point and the one boundary that maps errors to exit codes.

The command tree is :mod:`vimesync.cli.tree` (``build_app`` is re-exported here)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

from vimesync import __version__
from vimesync.cli import output, signals, tree
from vimesync.cli.tree import build_app
from vimesync.errors import EXIT_BAD_INPUT, Terminated, VimesyncError

__all__ = ["build_app", "main"]


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


def run() -> None:
    """The process's entry point (the ``vimesync`` script, ``python -m vimesync``): :func:`main`,
    then its exit without the interpreter's teardown. Everything of the command is done by then
    (its files closed, its scratch folders removed, its workers reaped: each by a ``with``), and
    tearing down the ~100 modules a command imported takes 10-13 ms, on every command. Standard
    output and error are flushed first; when that fails (a closed pipe), or the command raised,
    the exit is the usual one, which reports it as before."""
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the usual exit says what went wrong
        raise SystemExit(code) from None
    if code is None or isinstance(code, int):
        os._exit(code or 0)
    raise SystemExit(code)  # a message: printed by the usual exit


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. User mistakes become a one-line message and exit 2, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before typer and rich are imported: start-up is the cost
        sys.stdout.write(f"vimesync {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    with signals.stopping_on_signals():
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
        only = tree.only_command(args, completing=completing)
        command = typer.main.get_command(
            build_app(only, inner=tree.inner_groups(args, completing=completing))
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
    if signals.received(signal.SIGINT) and rv == 128 + signal.SIGINT:  # typer's silent Exit(130)
        _fail("interrupted", rv, args)
    sys.exit(rv if isinstance(rv, int) else 0)
