"""The process entry point (``vimesync``, ``python -m vimesync``) exits as ``main()`` says, without
the interpreter's teardown, and never loses what the command printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vimesync.cli import app


class _Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_exit(code: int) -> None:
        raise _Exited(code)

    monkeypatch.setattr(app.os, "_exit", fake_exit)


@pytest.mark.parametrize(
    ("raised", "code"), [(None, 0), (SystemExit(0), 0), (SystemExit(None), 0), (SystemExit(2), 2)]
)
def test_the_command_s_code_is_the_process_s(
    exits: None, monkeypatch: pytest.MonkeyPatch, raised: SystemExit | None, code: int
) -> None:
    def command() -> None:
        if raised is not None:
            raise raised

    monkeypatch.setattr(app, "main", command)
    with pytest.raises(_Exited) as got:
        app.run()
    assert got.value.code == code


def test_a_message_and_an_unexpected_error_take_the_usual_exit(
    exits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app, "main", lambda: sys.exit("a message"))
    with pytest.raises(SystemExit) as got:
        app.run()
    assert got.value.code == "a message"

    def bug() -> None:
        raise ZeroDivisionError

    monkeypatch.setattr(app, "main", bug)
    with pytest.raises(ZeroDivisionError):  # the traceback of a bug, as before
        app.run()


def test_an_output_that_cannot_be_flushed_takes_the_usual_exit(
    exits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Closed:
        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setattr(app, "main", lambda: None)
    monkeypatch.setattr(sys, "stdout", Closed())
    with pytest.raises(SystemExit) as got:
        app.run()
    assert got.value.code == 0


def test_a_large_json_document_arrives_whole_through_a_pipe(tmp_path: Path) -> None:
    # A real process: what it wrote and did not flush is flushed before the quick exit.
    script = (
        "import json, sys\n"
        "from vimesync.cli import app\n"
        "text = json.dumps({'rows': ['x' * 100] * 20000})\n"
        "app.main = lambda: [sys.stdout.write(text[i : i + 100]) for i in range(0, len(text), 100)]\n"
        "app.run()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as usual
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=60, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["rows"]) == 20000


def test_python_m_vimesync_keeps_its_exit_codes(tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "vimesync", "--version"], capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and ok.stdout.startswith("vimesync ")
    bad = subprocess.run(
        [sys.executable, "-m", "vimesync", "patches", "check", "--series", str(tmp_path / "none"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and json.loads(bad.stdout)["exit_code"] == 2
    assert bad.stderr.startswith("error: ")
