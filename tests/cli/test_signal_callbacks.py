"""A SIGTERM or Ctrl-C stops the command even where Python does not let its exception unwind it.

Found by sending signals at random moments to real checks: one landed in an import's module-lock
weakref callback (Python printed "Exception ignored" and dropped it; the check ran to its end and
exited 0), and one landed between closing a folder's descriptor and forgetting it, so that the
cleanup closed it again and its EBADF replaced the interrupt (the check reported a patch that
failed with "Bad file descriptor")."""

from __future__ import annotations

import errno
import gc
import json
import os
import signal
import time
import weakref
from pathlib import Path

import pytest

from vimesync import nofollow
from vimesync.cli import app, signals
from vimesync.errors import Terminated


class _Thing:
    pass


def _signalled_in_a_callback(sig: signal.Signals) -> None:
    """Send ``sig`` to ourselves from a weakref callback: its handler runs inside the callback."""
    thing = _Thing()
    ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), sig))
    del thing  # the callback runs here, and the handler in it
    assert ref() is None
    time.sleep(10)  # the command goes on; the signal must stop it here, at once


@pytest.mark.parametrize(
    ("sig", "raised"), [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_handled_inside_a_callback_still_stops_the_command(
    sig: signal.Signals, raised: type[BaseException], capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(raised):
        with signals.stopping_on_signals():
            _signalled_in_a_callback(sig)
    assert time.monotonic() - started < 5
    assert capsys.readouterr().err == ""  # not Python's "Exception ignored" and its traceback
    assert signal.getsignal(signal.SIGTERM) is not signals._on_sigterm  # restored on leaving


def test_other_unraisable_exceptions_are_left_to_the_usual_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[BaseException | None] = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: seen.append(u.exc_value))

    class Broken:
        def __del__(self) -> None:
            raise ValueError("in a destructor")

    with signals.stopping_on_signals():
        Broken()
        gc.collect()
    assert [type(e) for e in seen] == [ValueError]


def test_a_signal_dropped_as_the_command_ends_is_not_sent_after_it() -> None:
    # Ctrl-C dropped in a callback, and the command ends before it is sent again: as if it had
    # come after the command (nothing is sent to a process whose handlers are restored).
    with signals.stopping_on_signals():
        thing = _Thing()
        ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), signal.SIGINT))
        del thing
        assert ref() is None
    time.sleep(5 * signals.RESEND_AFTER)  # pytest's own SIGINT handler would raise here


def test_a_signal_whose_exception_was_replaced_on_the_way_is_raised_before_the_result() -> None:
    with pytest.raises(Terminated):
        with signals.stopping_on_signals():
            try:
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(10)
                finally:
                    raise OSError(errno.EBADF, "Bad file descriptor")  # a cleanup that failed
            except OSError:
                pass  # taken for the command's own error, as a hunk that failed
            signals.raise_received()  # what every command's result goes through first
    with signals.stopping_on_signals():
        signals.raise_received()  # a new command: nothing arrived during it


def test_an_interrupted_check_says_so_even_when_its_interrupt_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole path: a check whose SIGTERM a broad ``except`` took, and which then finished,
    exits 143 with one line (and one JSON document), not with the result it worked out."""
    import vimesync.app.check as use_case

    real = use_case.check

    def taken(*args: object, **kwargs: object) -> object:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)
        except BaseException:  # noqa: BLE001, S110 - what a careless library might do
            pass
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(use_case, "check", taken)
    (tmp_path / "src").mkdir()
    (tmp_path / "src/m.py").write_text("x = 1\n")
    (tmp_path / "series").write_text("")
    with pytest.raises(SystemExit) as got:
        app.main(
            [
                "patches",
                "check",
                "--source",
                str(tmp_path / "src"),
                "--series",
                str(tmp_path / "series"),
                "--json",
            ]
        )
    out, err = capsys.readouterr()
    assert got.value.code == 143 and err.strip().splitlines() == ["error: terminated"]
    assert json.loads(out)["error"] == "terminated"


def test_a_walk_to_a_folder_closes_each_descriptor_once_when_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The interrupt lands just after a parent folder's descriptor is closed.
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/b/f.py").write_text("x = 1\n")
    real = os.close
    closed: list[int] = []

    def close(fd: int) -> None:
        real(fd)
        assert fd not in closed, "closed twice"
        closed.append(fd)
        if len(closed) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(nofollow.os, "close", close)
    with pytest.raises(KeyboardInterrupt):
        nofollow.read_entry(tmp_path, "a/b/f.py")
    assert len(closed) == 2  # the root's, then the one the walk held
