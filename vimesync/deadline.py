"""A call that must end within a deadline whatever blocks it: run on a helper thread the caller
stops waiting for (GitHub, Buildkite, the registry). A socket timeout bounds one read, not a
server trickling a byte every few seconds; the caller, told :class:`Overdue`, shuts the socket
down so the abandoned thread's blocked read ends too."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Overdue(Exception):
    """The call did not end within its deadline (it may still be running)."""


def call_within(fn: Callable[[], T], seconds: float | None, *, name: str) -> T:
    """``fn()``'s value, or its exception raised here; :class:`Overdue` after ``seconds`` (None:
    wait for it)."""
    got: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            got.append((True, fn()))
        except BaseException as exc:  # handed to the caller's thread
            got.append((False, exc))

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(None if seconds is None else max(seconds, 0.0))
    if worker.is_alive():
        raise Overdue
    ok, value = got[0]
    if not ok:
        raise value
    result: T = value
    return result
