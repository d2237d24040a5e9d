"""The ``vimesync`` entry point and the one boundary that maps errors to exit codes."""

from __future__ import annotations

import sys

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

    for name in ("patches", "walk", "audit", "report", "demo"):
        try:
            importlib.import_module(f"vimesync.cli.{name}")
        except ModuleNotFoundError as exc:  # a group not built yet
            if exc.name != f"vimesync.cli.{name}":
                raise


_register()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI. User mistakes become a one-line message and exit 2, never a traceback."""
    try:
        rv = app(args=argv, standalone_mode=False)
    except VimesyncError as exc:
        output.error(exc.message, hint=exc.hint)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        output.error("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        output.error("interrupted")
        sys.exit(130)
    except Exception as exc:  # click usage errors arrive as ClickException subclasses
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code)
        raise
    sys.exit(rv if isinstance(rv, int) else 0)
