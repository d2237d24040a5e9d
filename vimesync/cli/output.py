"""Where the CLI writes: results to stdout, diagnostics and progress to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

stdout = Console(soft_wrap=True, highlight=False)
stderr = Console(stderr=True, soft_wrap=True, highlight=False)


def out(text: str) -> None:
    stdout.print(text, markup=False)


def error(message: str, *, hint: str | None = None) -> None:
    stderr.print(f"[bold red]error:[/] {escape(message)}")
    if hint:
        stderr.print(f"[dim]hint:[/] {escape(hint)}")


def warn(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {escape(message)}")


def emit_json(doc: Any) -> None:
    """Exactly one JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n")
    sys.stdout.flush()


def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(text)


def progress_enabled() -> bool:
    return stderr.is_terminal
