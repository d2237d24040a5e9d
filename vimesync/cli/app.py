"""The ``vimesync`` entry point and the one boundary that maps errors to exit codes."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from vimesync import __version__
from vimesync.cli import output
from vimesync.errors import EXIT_BAD_INPUT, VimesyncError

app = typer.Typer(
    name="vimesync",
    help="Keep a downstream fork in sync with its upstream and its pinned engine patch stack.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        output.out(f"vimesync {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Walk, classify, apply, audit, report."""


def _register() -> None:
    # Each command group lives in its own module and attaches itself to ``app``.
    import importlib

    for name in ("patches", "walk", "audit", "report", "demo", "ci", "sop"):
        try:
            importlib.import_module(f"vimesync.cli.{name}")
        except ModuleNotFoundError as exc:  # a group not built yet
            if exc.name != f"vimesync.cli.{name}":
                raise


_register()


def _usage_error(exc: BaseException) -> bool:
    """click's (or typer's vendored click's) usage errors: they know how to show themselves."""
    return callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int)


def _wants_json(argv: list[str]) -> bool:
    """``--json``, ``--format json`` or ``--format=json`` among the arguments."""
    pairs = zip(argv, argv[1:], strict=False)
    return "--json" in argv or "--format=json" in argv or ("--format", "json") in pairs


def _fail(message: str, code: int, argv: list[str], *, hint: str | None = None) -> None:
    """One line on stderr (and, when JSON was asked for, a JSON document on stdout), then exit."""
    output.error(message, hint=hint)
    if _wants_json(argv):
        output.emit_json({"ok": False, "error": message, "exit_code": code})
    sys.exit(code)


class Terminated(BaseException):
    """SIGTERM (a CI timeout, ``kill``) as an exception: unwinding runs every ``with`` block, so
    scratch folders and worker processes are cleaned up as on Ctrl-C. A BaseException, so that
    no ``except Exception`` on the way can swallow it."""


def _on_sigterm(signum: int, frame: object) -> None:
    # Once: a second SIGTERM during the cleanup must not abandon it half-way (SIGKILL still works).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(signum)


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
    if saved[signal.SIGINT] not in (signal.SIG_IGN, signal.default_int_handler):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. User mistakes become a one-line message and exit 2, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    with _signals_unwind():
        _main(args)


def _main(args: list[str]) -> None:
    try:
        rv = app(args=args, standalone_mode=False)
    except Terminated:
        output.error("terminated")
        sys.exit(128 + signal.SIGTERM)
    except VimesyncError as exc:
        _fail(exc.message, exc.exit_code, args, hint=exc.hint)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        output.error("interrupted")
        sys.exit(130)
    except OSError as exc:
        # An output path that cannot be written (--export, --output, --keep): name it, no traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", EXIT_BAD_INPUT, args)
    except Exception as exc:
        if not _usage_error(exc):
            raise
        exc.show()  # type: ignore[attr-defined]
        code = exc.exit_code  # type: ignore[attr-defined]
        sys.exit(EXIT_BAD_INPUT if code in (1, 2) else code)
    sys.exit(rv if isinstance(rv, int) else 0)
