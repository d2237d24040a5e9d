"""How SIGTERM (a CI timeout, ``kill``) and SIGINT (Ctrl-C) stop a command: as exceptions
(:class:`~vimesync.errors.Terminated`, ``KeyboardInterrupt``) that unwind it, so every ``with``
removes its scratch folders and ends its workers, and the entry point says so in one line.

An exception raised by a signal handler lands wherever the command happens to be, and Python
does not always let it unwind: inside a weakref callback or a ``__del__`` it is printed and
dropped; a cleanup that fails in a ``finally`` (closing a descriptor the signal left closed)
replaces it with its own error; a broad ``except`` on the way may take it. So the signals that
arrived are also remembered: one dropped by Python is sent again, and before a command's result
is shown, :func:`raise_received` raises whatever arrived. An interrupted command is never
reported as done, nor as failing for a reason the interruption made."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from vimesync.errors import Terminated

RESEND_AFTER = 0.005  # seconds: a signal Python dropped is sent again this much later

_received: set[int] = set()  # the signals that arrived during this command


def received(sig: int) -> bool:
    """Whether ``sig`` arrived during the command."""
    return sig in _received


def raise_received() -> None:
    """Raise the exception of a signal that arrived during the command, if one did: called
    before its result is shown (the exception may have been taken or replaced on the way)."""
    if signal.SIGTERM in _received:
        raise Terminated(signal.SIGTERM)
    if signal.SIGINT in _received:
        raise KeyboardInterrupt


def _on_sigterm(signum: int, frame: object) -> None:
    # Once: a second SIGTERM during the cleanup must not abandon it half-way (SIGKILL still works).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _received.add(signal.SIGTERM)
    raise Terminated(signum)


def _on_sigint(signum: int, frame: object) -> None:
    # typer turns a KeyboardInterrupt into a silent ``Exit(130)`` returned as the command's
    # value: what is remembered lets the entry point still say "interrupted" in its one line.
    _received.add(signal.SIGINT)
    raise KeyboardInterrupt


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM raises Terminated and SIGINT KeyboardInterrupt for the duration of the command
    (not when the job set either to be ignored, nor outside the main thread), wherever the
    handler happens to run: one that Python drops is raised again."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    _received.clear()
    if saved[signal.SIGTERM] != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _on_sigterm)
    if saved[signal.SIGINT] != signal.SIG_IGN:
        signal.signal(signal.SIGINT, _on_sigint)
    hook = sys.unraisablehook
    again: list[threading.Timer] = []

    def lost(unraisable: sys.UnraisableHookArgs) -> None:
        # A handler that ran inside a weakref callback or a __del__ (an import's module lock,
        # the collector) raised where Python can only print the exception and drop it: the
        # command ran on, its signal ignored. The signal is sent again a moment later, from a
        # thread: by then the command is back in its own code, where the handler's exception
        # unwinds it (sent from here, the handler would run here, and be dropped again).
        exc = unraisable.exc_value
        if isinstance(exc, Terminated) and saved[signal.SIGTERM] != signal.SIG_IGN:
            signal.signal(signal.SIGTERM, _on_sigterm)  # it ignores a second SIGTERM once raised
            again.append(_send_later(signal.SIGTERM))
        elif isinstance(exc, KeyboardInterrupt) and signal.SIGINT in _received:
            again.append(_send_later(signal.SIGINT))
        else:
            hook(unraisable)

    sys.unraisablehook = lost
    try:
        yield
    finally:
        for timer in again:  # the command ended first: as if the signal had come after it
            timer.cancel()
        sys.unraisablehook = hook
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


def _send_later(sig: signal.Signals) -> threading.Timer:
    timer = threading.Timer(RESEND_AFTER, os.kill, (os.getpid(), sig))
    timer.daemon = True
    timer.start()
    return timer
